package sluice.interop;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;

import org.apache.kafka.clients.CommonClientConfigs;

/**
 * Client settings common to every scenario: only what is needed, the rest stays default.
 * When the environment variable INTEROP_CLIENT_CONFIG names a properties file (as
 * kafka-console-producer's --command-config does), its settings are added to every client:
 * security.protocol, ssl.*, sasl.* for the security tests.
 */
final class Clients {
    static final String CONFIG_ENV = "INTEROP_CLIENT_CONFIG";

    private Clients() {
    }

    static Properties base(String bootstrap) {
        Properties p = new Properties();
        p.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(CommonClientConfigs.CLIENT_ID_CONFIG, "sluice-interop");
        String file = System.getenv(CONFIG_ENV);
        if (file != null && !file.isEmpty()) {
            try (InputStream in = Files.newInputStream(Path.of(file))) {
                Properties extra = new Properties();
                extra.load(in);
                p.putAll(extra);
            } catch (IOException e) {
                throw new UncheckedIOException(CONFIG_ENV + "=" + file, e);
            }
        }
        return p;
    }
}
