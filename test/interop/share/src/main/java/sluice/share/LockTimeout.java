package sluice.share;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;

/**
 * The acquisition lock: group configs share.record.lock.duration.ms=LOCK_MS and
 * share.delivery.count.limit=LIMIT. One record; each of LIMIT consumers in turn acquires
 * it and then stays silent: it remains a member (its heartbeats go on) but never polls,
 * acknowledges or closes, so nothing but the lock's expiry can free the record (a close
 * or a leave would release it at once). Each next consumer gets it only after the lock
 * duration, with the delivery count one higher. After the LIMIT-th expiry the record is
 * archived: a fresh consumer polling past the last lock's expiry gets nothing, and the
 * partition's lag is 0 although nobody acknowledged the record.
 */
final class LockTimeout {
  private LockTimeout() {}

  static void run(Share s, String topic, String group, int lockMs, int limit) {
    s.createTopic(topic, 1);
    s.groupConfigs(group, Map.of(
        "share.auto.offset.reset", "earliest",
        "share.record.lock.duration.ms", String.valueOf(lockMs),
        "share.delivery.count.limit", String.valueOf(limit)));
    s.produce(topic, 0, 1, "v");
    List<KafkaShareConsumer<String, String>> silent = new ArrayList<>();
    try {
      long acquiredAt = 0;
      for (int n = 1; n <= limit; n++) {
        String id = group + "-" + n;
        KafkaShareConsumer<String, String> c = s.consumer(group, id, Share.EXPLICIT);
        silent.add(c);
        c.subscribe(List.of(topic));
        List<ConsumerRecord<String, String>> got = Share.pollFor(c, 1, Duration.ofMillis(lockMs + 60_000L), false);
        long now = System.nanoTime();
        if (got.size() != 1) throw Share.fail(id + " got " + Share.offsetsOf(got) + ", want the one record");
        ConsumerRecord<String, String> r = got.get(0);
        if (Share.deliveries(r) != n) throw Share.fail(id + " got " + Share.where(r) + " with delivery count " + Share.deliveries(r) + ", want " + n);
        long waitedMs = (now - acquiredAt) / 1_000_000;
        if (n > 1 && waitedMs < lockMs - 1000) {
          throw Share.fail(id + " got " + Share.where(r) + " " + waitedMs + " ms after the previous acquisition, before the " + lockMs + " ms lock ran out");
        }
        s.say(id + " acquired " + Share.where(r) + " with delivery count " + n
            + (n > 1 ? " " + waitedMs + " ms after the previous acquisition" : "") + "; it stays silent");
        acquiredAt = now;
        s.showOffsets(group, topic, 1, "while " + id + " holds it");
      }
      String id = group + "-after";
      try (KafkaShareConsumer<String, String> c = s.consumer(group, id, Share.EXPLICIT)) {
        c.subscribe(List.of(topic));
        List<ConsumerRecord<String, String>> got = new ArrayList<>();
        s.pollUntilAssigned(c, group, id, got, Duration.ofSeconds(30));
        long untilMs = lockMs + 3000 - (System.nanoTime() - acquiredAt) / 1_000_000;
        got.addAll(Share.pollFor(c, 1, Duration.ofMillis(Math.max(untilMs, 3000)), false));
        if (!got.isEmpty()) throw Share.fail(id + " got " + Share.offsetsOf(got) + " after " + limit + " deliveries (limit " + limit + ")");
        s.say(id + " polled until 3 s past the last lock's expiry and got nothing");
      }
      s.awaitNoLag(group, topic, 1, Duration.ofSeconds(15));
      s.say("the record was archived after " + limit + " deliveries");
    } finally {
      for (KafkaShareConsumer<String, String> c : silent) c.close(Duration.ofSeconds(5));
    }
  }
}
