package sluice.share;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicIdPartition;

/**
 * The fault test's account of every record: who received it, with which delivery count,
 * and which acceptances the broker confirmed (the acknowledgement commit callback with no
 * exception). Records are named by their value, a unique id the producer wrote. Shared by
 * the consumer threads; every method is synchronized (100,000 records: no contention that
 * matters next to the network).
 *
 * A record the broker confirmed as accepted must never be delivered again, and never
 * confirmed as accepted a second time: both are counted as violations with a sample.
 */
final class FaultLedger {
  private static final int SAMPLES = 10;

  private final Map<String, String> idAt = new HashMap<>(); // "partition@offset" -> id
  private final Map<String, String> placeOf = new HashMap<>(); // id -> "partition@offset"
  private final Map<String, Integer> lastCount = new HashMap<>(); // id -> last delivery count
  private final Set<String> confirmed = new HashSet<>();
  private final Map<String, Integer> failedAcks = new TreeMap<>(); // exception class -> records
  private final Map<String, Integer> clientErrors = new TreeMap<>(); // where: exception class -> times
  private final Map<String, Integer> perConsumer = new TreeMap<>(); // client -> confirmed
  final List<String> violations = new ArrayList<>();
  long deliveries, countAboveOne, afterConfirmed, confirmedTwice, movedRecords;
  private long lastDelivery = System.nanoTime();

  /** A record arrived at consumer client; returns its id. */
  synchronized String delivered(ConsumerRecord<String, String> r, String client) {
    String id = r.value();
    String place = r.partition() + "@" + r.offset();
    int count = Share.deliveries(r);
    deliveries++;
    lastDelivery = System.nanoTime();
    if (count > 1) countAboveOne++;
    String prevPlace = placeOf.putIfAbsent(id, place);
    if (prevPlace != null && !prevPlace.equals(place)) {
      movedRecords++;
      violation("id " + id + " is in the log twice: " + prevPlace + " and " + place);
    }
    idAt.put(place, id);
    lastCount.put(id, count);
    if (confirmed.contains(id)) {
      afterConfirmed++;
      violation("id " + id + " (" + place + ") delivered to " + client + " with count " + count
          + " after its acceptance was confirmed");
    }
    return id;
  }

  /** The acknowledgement commit callback's report: offsets of the topic's partition p. */
  synchronized List<String> acknowledged(String client, Map<TopicIdPartition, java.util.Set<Long>> offsets, Exception e) {
    List<String> ids = new ArrayList<>();
    for (Map.Entry<TopicIdPartition, java.util.Set<Long>> en : offsets.entrySet()) {
      int p = en.getKey().partition();
      for (long o : en.getValue()) {
        String id = idAt.get(p + "@" + o);
        if (id == null) {
          violation(client + " got an acknowledgement result for " + p + "@" + o + ", a record it never received");
          continue;
        }
        if (e != null) {
          failedAcks.merge(e.getClass().getSimpleName(), 1, Integer::sum);
          continue;
        }
        ids.add(id);
        perConsumer.merge(client, 1, Integer::sum);
        if (!confirmed.add(id)) {
          confirmedTwice++;
          violation("id " + id + " (" + p + "@" + o + ") confirmed as accepted a second time, to " + client);
        }
      }
    }
    return ids;
  }

  synchronized void clientError(String where, Exception e) {
    clientErrors.merge(where + ": " + e.getClass().getSimpleName(), 1, Integer::sum);
  }

  private void violation(String what) {
    if (violations.size() < SAMPLES) violations.add(what);
  }

  synchronized int seen() {
    return placeOf.size();
  }

  synchronized int confirmed() {
    return confirmed.size();
  }

  synchronized double quietSeconds() {
    return (System.nanoTime() - lastDelivery) / 1e9;
  }

  synchronized boolean clean() {
    return afterConfirmed == 0 && confirmedTwice == 0 && movedRecords == 0 && violations.isEmpty();
  }

  /**
   * The final counts. Of the records never confirmed: those last delivered with count
   * limit or more were archived (or accepted with the answer lost: either way no longer
   * deliverable); those below the limit were accepted by the broker with the client never
   * told (the acknowledgement's answer was lost to a kill), since they did not come back.
   */
  synchronized Map<String, Long> counts(int records, int limit) {
    long archived = 0, unconfirmed = 0, missing = 0;
    for (int i = 0; i < records; i++) {
      String id = String.valueOf(i);
      if (confirmed.contains(id)) continue;
      Integer c = lastCount.get(id);
      if (c == null) missing++;
      else if (c >= limit) archived++;
      else unconfirmed++;
    }
    Map<String, Long> m = new java.util.LinkedHashMap<>();
    m.put("records", (long) records);
    m.put("deliveries", deliveries);
    m.put("redeliveries", deliveries - placeOf.size());
    m.put("deliveries-with-count-above-1", countAboveOne);
    m.put("accepted-acknowledged", (long) confirmed.size());
    m.put("accepted-unconfirmed", unconfirmed);
    m.put("archived", archived);
    m.put("never-delivered", missing);
    m.put("duplicates-after-acknowledged-acceptance", afterConfirmed);
    m.put("accepted-acknowledged-twice", confirmedTwice);
    return m;
  }

  synchronized String failures() {
    return "failed acknowledgements " + failedAcks + ", client errors " + clientErrors + ", accepted per consumer " + perConsumer;
  }
}
