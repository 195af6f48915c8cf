package sluice.connect;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.sink.SinkConnector;

/**
 * Applies Debezium change events (JsonConverter, schemas.enable=false) to one PostgreSQL
 * table: c, r and u upsert the event's "after" row by its primary key, d deletes it,
 * tombstones are skipped. Replays are harmless (the sink is idempotent), so Connect's
 * at-least-once delivery to sinks leaves the table equal to the source's.
 */
public class PgSinkConnector extends SinkConnector {
  static final ConfigDef CONFIG = new ConfigDef()
      .define("connection.url", ConfigDef.Type.STRING, ConfigDef.Importance.HIGH, "JDBC URL")
      .define("connection.user", ConfigDef.Type.STRING, "postgres", ConfigDef.Importance.HIGH, "user")
      .define("table", ConfigDef.Type.STRING, ConfigDef.Importance.HIGH, "target table")
      .define("pk", ConfigDef.Type.STRING, "id", ConfigDef.Importance.HIGH, "primary key column");

  private Map<String, String> props;

  @Override public void start(Map<String, String> props) {
    CONFIG.parse(props);
    this.props = props;
  }

  @Override public Class<? extends Task> taskClass() { return PgSinkTask.class; }

  @Override public List<Map<String, String>> taskConfigs(int maxTasks) {
    List<Map<String, String>> configs = new ArrayList<>();
    for (int i = 0; i < maxTasks; i++) configs.add(props);
    return configs;
  }

  @Override public void stop() {}

  @Override public ConfigDef config() { return CONFIG; }

  @Override public String version() { return "1"; }
}
