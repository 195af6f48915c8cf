package sluice.interop;

import java.util.Properties;

import org.apache.kafka.clients.CommonClientConfigs;

/** Client settings common to every scenario: only what is needed, the rest stays default. */
final class Clients {
    private Clients() {
    }

    static Properties base(String bootstrap) {
        Properties p = new Properties();
        p.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(CommonClientConfigs.CLIENT_ID_CONFIG, "sluice-interop");
        return p;
    }
}
