package sluice.connect;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.errors.RetriableException;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.sink.SinkTask;

/** The task of {@link PgSinkConnector}: each put is one database transaction. */
public class PgSinkTask extends SinkTask {
  private String url;
  private String user;
  private String table;
  private String pk;
  private Connection db;

  @Override public void start(Map<String, String> props) {
    AbstractConfig config = new AbstractConfig(PgSinkConnector.CONFIG, props);
    url = config.getString("connection.url");
    user = config.getString("connection.user");
    table = config.getString("table");
    pk = config.getString("pk");
  }

  @Override public void put(Collection<SinkRecord> records) {
    try {
      if (db == null || db.isClosed()) {
        db = DriverManager.getConnection(url, user, "");
        db.setAutoCommit(false);
      }
      for (SinkRecord record : records) apply(record);
      db.commit();
    } catch (SQLException e) {
      // Connect redelivers the batch after a retriable error; the next put reconnects.
      try { if (db != null) db.close(); } catch (SQLException ignored) { }
      db = null;
      throw new RetriableException("applying " + records.size() + " change events", e);
    }
  }

  @SuppressWarnings("unchecked")
  private void apply(SinkRecord record) throws SQLException {
    if (record.value() == null) return; // the tombstone after a delete; the d event did it
    if (!(record.value() instanceof Map)) {
      throw new ConnectException("expected a Debezium envelope as a map, got " + record.value());
    }
    Map<String, Object> event = (Map<String, Object>) record.value();
    String op = String.valueOf(event.get("op"));
    if (op.equals("d")) {
      Map<String, Object> before = (Map<String, Object>) event.get("before");
      try (PreparedStatement st = db.prepareStatement("DELETE FROM " + table + " WHERE " + pk + " = ?")) {
        st.setObject(1, before.get(pk));
        st.executeUpdate();
      }
      return;
    }
    Map<String, Object> after = (Map<String, Object>) event.get("after");
    List<String> columns = new ArrayList<>(after.keySet());
    StringBuilder sql = new StringBuilder("INSERT INTO " + table + " (" + String.join(", ", columns) + ") VALUES (");
    for (int i = 0; i < columns.size(); i++) sql.append(i == 0 ? "?" : ", ?");
    sql.append(") ON CONFLICT (").append(pk).append(") DO UPDATE SET ");
    boolean first = true;
    for (String c : columns) {
      if (c.equals(pk)) continue;
      sql.append(first ? "" : ", ").append(c).append(" = EXCLUDED.").append(c);
      first = false;
    }
    try (PreparedStatement st = db.prepareStatement(sql.toString())) {
      for (int i = 0; i < columns.size(); i++) st.setObject(i + 1, after.get(columns.get(i)));
      st.executeUpdate();
    }
  }

  @Override public void stop() {
    try { if (db != null) db.close(); } catch (SQLException ignored) { }
  }

  @Override public String version() { return "1"; }
}
