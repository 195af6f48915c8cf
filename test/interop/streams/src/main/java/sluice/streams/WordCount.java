package sluice.streams;

import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;

/**
 * Kafka's WordCount demo with exactly-once: lines of INPUT are split into words, grouped by
 * word (a repartition topic) and counted (a RocksDB store with its changelog); every count
 * update goes to OUTPUT (key the word, value the count as a long). The only settings that
 * are not Streams' defaults: processing.guarantee=exactly_once_v2, the state directory
 * (kept across a restart, so a restarted instance has the same process id and so the same
 * transactional ids, fencing the killed one) and a 6 s consumer session timeout (so a
 * killed instance leaves the group in seconds rather than Kafka's default 45 s).
 * Runs until SIGTERM (closes, prints "closed true in state NOT_RUNNING") or SIGKILL; prints
 * "RUNNING" once it processes. An exception that reaches a stream thread shuts the client
 * down: exit status 1.
 */
public final class WordCount {
    private WordCount() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 5) {
            System.err.println("usage: WordCount BOOTSTRAP APPLICATION_ID INPUT OUTPUT STATE_DIR");
            System.exit(2);
        }
        Properties p = new Properties();
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, args[1]);
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        p.put(StreamsConfig.STATE_DIR_CONFIG, args[4]);
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), 6000);
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG), 1000);

        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(args[2], Consumed.with(Serdes.String(), Serdes.String()))
                .flatMapValues(line -> Arrays.asList(line.toLowerCase(Locale.ROOT).split("\\W+")))
                .filter((key, word) -> !word.isEmpty())
                .groupBy((key, word) -> word, Grouped.with(Serdes.String(), Serdes.String()))
                .count(Materialized.as("counts"))
                .toStream()
                .to(args[3], Produced.with(Serdes.String(), Serdes.Long()));

        KafkaStreams streams = new KafkaStreams(builder.build(), p);
        CountDownLatch done = new CountDownLatch(1);
        streams.setStateListener((now, before) -> {
            System.out.println("state " + before + " -> " + now);
            if (now == KafkaStreams.State.RUNNING) {
                System.out.println("RUNNING");
            }
            if (now == KafkaStreams.State.ERROR || now == KafkaStreams.State.NOT_RUNNING) {
                done.countDown();
            }
        });
        streams.setUncaughtExceptionHandler(e -> {
            System.out.println("uncaught: " + e);
            e.printStackTrace(System.out);
            return StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        // SIGTERM: close (commit, leave the group), then say how it ended; the JVM exits 143.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            boolean closed = streams.close(Duration.ofSeconds(20));
            System.out.println("closed " + closed + " in state " + streams.state());
        }));
        streams.start();
        done.await();
        System.out.println("stopped in state " + streams.state());
        System.exit(streams.state() == KafkaStreams.State.ERROR ? 1 : 0);
    }
}
