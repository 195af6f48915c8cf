package sluice.ecostreams;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.apache.kafka.streams.state.ReadOnlyWindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;

/**
 * Interactive queries over HTTP on 127.0.0.1 (one instance owns every partition here, so
 * the local stores hold everything). Plain-text answers, one "KEY VALUE" or
 * "KEY WINDOW_START_MS VALUE" line per entry, sorted by the store's order:
 *
 * <pre>
 * GET /kv?store=S&amp;key=K        the value of K in key-value store S (404 when absent)
 * GET /kv?store=S                every key of S (the all-keys range)
 * GET /window?store=S&amp;key=K    every window of K in window store S
 * GET /window?store=S            every key and window of S
 * </pre>
 *
 * 503 while the store is not queryable (rebalancing or restoring).
 */
final class Queries {
    private final KafkaStreams streams;
    private final HttpServer server;

    Queries(KafkaStreams streams, int port) throws IOException {
        this.streams = streams;
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 0);
        server.createContext("/kv", ex -> serve(ex, this::kv));
        server.createContext("/window", ex -> serve(ex, this::window));
        server.start();
        System.out.println("queries on 127.0.0.1:" + port);
    }

    void stop() {
        server.stop(0);
    }

    private interface Handler {
        String answer(Map<String, String> q);
    }

    private static final class NotFound extends RuntimeException {
        NotFound(String m) {
            super(m);
        }
    }

    private void serve(HttpExchange ex, Handler h) throws IOException {
        int status = 200;
        String body;
        try {
            body = h.answer(params(ex.getRequestURI().getRawQuery()));
        } catch (NotFound e) {
            status = 404;
            body = e.getMessage() + "\n";
        } catch (RuntimeException e) {
            // InvalidStateStoreException and friends: not queryable now, ask again.
            status = 503;
            body = e + "\n";
        }
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        ex.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(bytes);
        }
    }

    private static Map<String, String> params(String raw) {
        Map<String, String> m = new HashMap<>();
        if (raw == null) {
            return m;
        }
        for (String kv : raw.split("&")) {
            int eq = kv.indexOf('=');
            if (eq > 0) {
                m.put(URLDecoder.decode(kv.substring(0, eq), StandardCharsets.UTF_8),
                        URLDecoder.decode(kv.substring(eq + 1), StandardCharsets.UTF_8));
            }
        }
        return m;
    }

    private String kv(Map<String, String> q) {
        ReadOnlyKeyValueStore<String, Object> store = streams.store(
                StoreQueryParameters.fromNameAndType(q.get("store"), QueryableStoreTypes.keyValueStore()));
        String key = q.get("key");
        if (key != null) {
            Object v = store.get(key);
            if (v == null) {
                throw new NotFound("no key " + key);
            }
            return key + " " + v + "\n";
        }
        StringBuilder sb = new StringBuilder();
        try (KeyValueIterator<String, Object> it = store.all()) {
            while (it.hasNext()) {
                KeyValue<String, Object> e = it.next();
                sb.append(e.key).append(' ').append(e.value).append('\n');
            }
        }
        return sb.toString();
    }

    private String window(Map<String, String> q) {
        ReadOnlyWindowStore<String, Object> store = streams.store(
                StoreQueryParameters.fromNameAndType(q.get("store"), QueryableStoreTypes.windowStore()));
        String key = q.get("key");
        StringBuilder sb = new StringBuilder();
        if (key != null) {
            try (WindowStoreIterator<Object> it = store.fetch(key, Instant.EPOCH, Instant.ofEpochMilli(Long.MAX_VALUE / 2))) {
                while (it.hasNext()) {
                    KeyValue<Long, Object> e = it.next();
                    sb.append(key).append(' ').append(e.key).append(' ').append(e.value).append('\n');
                }
            }
            return sb.toString();
        }
        try (KeyValueIterator<Windowed<String>, Object> it = store.all()) {
            while (it.hasNext()) {
                KeyValue<Windowed<String>, Object> e = it.next();
                sb.append(e.key.key()).append(' ').append(e.key.window().start()).append(' ')
                        .append(e.value).append('\n');
            }
        }
        return sb.toString();
    }
}
