package sluice.ecostreams;

import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.TimeWindows;

/** The three topologies; every store is Streams' default, a persistent RocksDB store. */
final class Topologies {
    /** Queryable store names (Queries and the scenarios use them). */
    static final String COUNTS = "counts";
    static final String WINDOW_COUNTS = "window-counts";
    static final String CUSTOMERS = "customers-store";

    private Topologies() {
    }

    static Topology build(String mode, Map<String, String> app) {
        StreamsBuilder b = new StreamsBuilder();
        switch (mode) {
            case "wordcount" -> wordCount(b, app);
            case "windowed" -> windowed(b, app);
            case "join" -> join(b, app);
            default -> throw new IllegalArgumentException("unknown mode " + mode);
        }
        return b.build();
    }

    private static String need(Map<String, String> app, String name) {
        String v = app.get(name);
        if (v == null) {
            throw new IllegalArgumentException("missing " + name + "=...");
        }
        return v;
    }

    /**
     * Kafka's WordCount demo: lines split into words, grouped by word (a repartition topic)
     * and counted (a key-value store with its compacted changelog); every count update goes
     * to app.output (key the word, value the count as a long).
     */
    private static void wordCount(StreamsBuilder b, Map<String, String> app) {
        b.stream(need(app, "app.input"), Consumed.with(Serdes.String(), Serdes.String()))
                .flatMapValues(line -> Arrays.asList(line.toLowerCase(Locale.ROOT).split("\\W+")))
                .filter((key, word) -> !word.isEmpty())
                .groupBy((key, word) -> word, Grouped.with(Serdes.String(), Serdes.String()))
                .count(Materialized.as(COUNTS))
                .toStream()
                .to(need(app, "app.output"), Produced.with(Serdes.String(), Serdes.Long()));
    }

    /**
     * Records of app.input counted per key in tumbling event-time windows of app.window.ms
     * (a window store with a compact,delete changelog; a day's grace, so a record is never
     * late for these tests); every update goes to app.output as key "KEY@WINDOW_START_MS",
     * value the count as a long.
     */
    private static void windowed(StreamsBuilder b, Map<String, String> app) {
        Duration size = Duration.ofMillis(Long.parseLong(app.getOrDefault("app.window.ms", "10000")));
        b.stream(need(app, "app.input"), Consumed.with(Serdes.String(), Serdes.String()))
                .groupByKey()
                .windowedBy(TimeWindows.ofSizeAndGrace(size, Duration.ofDays(1)))
                .count(Materialized.as(WINDOW_COUNTS))
                .toStream()
                .map((w, count) -> KeyValue.pair(w.key() + "@" + w.window().start(), count))
                .to(need(app, "app.output"), Produced.with(Serdes.String(), Serdes.Long()));
    }

    /**
     * Orders of app.input (key the customer id, value the order) left-joined with the
     * customers table read from app.table (a compacted topic, key the customer id, value its
     * tier; a tombstone deletes the customer): app.output gets, per order, key the customer
     * and value "ORDER:TIER", TIER "none" when the table has no such customer. The table is
     * materialized as customers-store, whose changelog Streams creates.
     */
    private static void join(StreamsBuilder b, Map<String, String> app) {
        KTable<String, String> customers = b.table(need(app, "app.table"),
                Consumed.with(Serdes.String(), Serdes.String()), Materialized.as(CUSTOMERS));
        b.stream(need(app, "app.input"), Consumed.with(Serdes.String(), Serdes.String()))
                .leftJoin(customers, (order, tier) -> order + ":" + (tier == null ? "none" : tier))
                .to(need(app, "app.output"), Produced.with(Serdes.String(), Serdes.String()));
    }
}
