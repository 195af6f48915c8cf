package sluice.ecostreams;

import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;
import org.apache.kafka.streams.processor.StateRestoreListener;

/**
 * The Streams applications of the ecosystem suite:
 *
 * <pre>App MODE BOOTSTRAP APPLICATION_ID STATE_DIR [NAME=VALUE...]</pre>
 *
 * MODE is wordcount, windowed or join (Topologies). A NAME starting with "app." is this
 * program's: app.input, app.output, app.table (topic names), app.window.ms (the tumbling
 * window), app.iq.port (serve interactive queries on 127.0.0.1:PORT, Queries). Every other
 * NAME=VALUE is a Streams setting (processing.guarantee, replication.factor,
 * group.protocol, ...). Without settings: Streams' defaults except a 6 s consumer session
 * (a killed instance leaves the group in seconds rather than 45 s).
 *
 * Prints "state A -> B" on every change, "RUNNING" and "running-at-ms EPOCH_MS" (for the
 * benchmark) once it processes, "restored STORE
 * PARTITION N" when a store's restore ends and "restored-total N" with the sum so far, so
 * a scenario sees a restore from the changelog happen. SIGTERM closes it ("closed true in
 * state NOT_RUNNING"); an exception reaching a stream thread shuts the client down with
 * "uncaught: ..." and exit status 1.
 */
public final class App {
    private App() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 4) {
            System.err.println("usage: App wordcount|windowed|join BOOTSTRAP APPLICATION_ID STATE_DIR [NAME=VALUE...]");
            System.exit(2);
        }
        Map<String, String> app = new TreeMap<>();
        Properties p = new Properties();
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, args[1]);
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, args[2]);
        p.put(StreamsConfig.STATE_DIR_CONFIG, args[3]);
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), 6000);
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG), 1000);
        for (int i = 4; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            if (eq <= 0) {
                System.err.println("not NAME=VALUE: " + args[i]);
                System.exit(2);
            }
            String name = args[i].substring(0, eq);
            String value = args[i].substring(eq + 1);
            if (name.startsWith("app.")) {
                app.put(name, value);
            } else {
                p.put(name, value);
            }
        }
        Topology topology = Topologies.build(args[0], app);

        KafkaStreams streams = new KafkaStreams(topology, p);
        CountDownLatch done = new CountDownLatch(1);
        streams.setStateListener((now, before) -> {
            System.out.println("state " + before + " -> " + now);
            if (now == KafkaStreams.State.RUNNING) {
                System.out.println("RUNNING");
                System.out.println("running-at-ms " + System.currentTimeMillis());
            }
            if (now == KafkaStreams.State.ERROR || now == KafkaStreams.State.NOT_RUNNING) {
                done.countDown();
            }
        });
        AtomicLong restored = new AtomicLong();
        streams.setGlobalStateRestoreListener(new StateRestoreListener() {
            @Override
            public void onRestoreStart(TopicPartition tp, String store, long start, long end) {
                System.out.println("restore-start " + store + " " + tp + " offsets " + start + ".." + end);
            }

            @Override
            public void onBatchRestored(TopicPartition tp, String store, long batchEnd, long n) {
            }

            @Override
            public void onRestoreEnd(TopicPartition tp, String store, long n) {
                System.out.println("restored " + store + " " + tp.partition() + " " + n);
                System.out.println("restored-total " + restored.addAndGet(n));
            }
        });
        streams.setUncaughtExceptionHandler(e -> {
            System.out.println("uncaught: " + e);
            e.printStackTrace(System.out);
            return StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        Queries queries = null;
        if (app.containsKey("app.iq.port")) {
            queries = new Queries(streams, Integer.parseInt(app.get("app.iq.port")));
        }
        // SIGTERM: close (commit, leave the group), then say how it ended; the JVM exits 143.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            boolean closed = streams.close(Duration.ofSeconds(20));
            System.out.println("closed " + closed + " in state " + streams.state());
        }));
        streams.start();
        done.await();
        if (queries != null) {
            queries.stop();
        }
        System.out.println("stopped in state " + streams.state());
        System.exit(streams.state() == KafkaStreams.State.ERROR ? 1 : 0);
    }
}
