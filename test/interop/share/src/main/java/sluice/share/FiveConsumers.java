package sluice.share;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;

/**
 * Five share consumers (explicit mode, one thread each) on a 2-partition topic: more
 * consumers than partitions, which a classic or KIP-848 consumer group cannot use. Once
 * all five are assigned members, records are written in small rounds while the
 * consumers work (10 ms a record); every record must be accepted exactly once, with
 * delivery count 1, and every consumer must have received some.
 */
final class FiveConsumers {
  private static final int CONSUMERS = 5;
  private static final int ROUNDS = 40;
  private static final int PER_ROUND = 5;
  private static final int TOTAL = ROUNDS * PER_ROUND * 2;

  private FiveConsumers() {}

  static void run(Share s, String topic, String group) throws InterruptedException {
    s.createTopic(topic, 2);
    s.groupConfigs(group, Map.of("share.auto.offset.reset", "earliest"));
    Map<String, String> acceptedBy = new ConcurrentHashMap<>();
    ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
    AtomicBoolean stop = new AtomicBoolean();
    List<Thread> threads = new ArrayList<>();
    for (int i = 1; i <= CONSUMERS; i++) {
      String id = group + "-" + i;
      Thread t = new Thread(() -> work(s, topic, group, id, acceptedBy, errors, stop), id);
      t.start();
      threads.add(t);
    }
    try {
      s.awaitMembers(group, CONSUMERS, Duration.ofSeconds(60));
      s.say(CONSUMERS + " consumers are assigned members; writing " + TOTAL + " records in " + ROUNDS + " rounds");
      try (KafkaProducer<String, String> producer = s.producer()) {
        for (int r = 0; r < ROUNDS && errors.isEmpty(); r++) {
          Share.produce(producer, topic, 0, PER_ROUND, "r" + r + "-p0");
          Share.produce(producer, topic, 1, PER_ROUND, "r" + r + "-p1");
          Share.sleep(50);
        }
      }
      Share.await(TOTAL + " records accepted (" + acceptedBy.size() + " so far)", Duration.ofSeconds(90),
          () -> acceptedBy.size() >= TOTAL || !errors.isEmpty());
    } finally {
      stop.set(true);
      for (Thread t : threads) t.join(60_000);
    }
    if (!errors.isEmpty()) throw Share.fail(String.join("; ", errors));
    Map<String, Integer> counts = new TreeMap<>();
    for (int i = 1; i <= CONSUMERS; i++) counts.put(group + "-" + i, 0);
    for (String id : acceptedBy.values()) counts.merge(id, 1, Integer::sum);
    s.say("records accepted per consumer: " + counts + " (total " + acceptedBy.size() + ")");
    if (acceptedBy.size() != TOTAL) throw Share.fail("accepted " + acceptedBy.size() + " records, want " + TOTAL);
    for (Map.Entry<String, Integer> e : counts.entrySet()) {
      if (e.getValue() == 0) throw Share.fail(e.getKey() + " received no records");
    }
    s.awaitNoLag(group, topic, 2, Duration.ofSeconds(15));
  }

  private static void work(Share s, String topic, String group, String id, Map<String, String> acceptedBy,
      ConcurrentLinkedQueue<String> errors, AtomicBoolean stop) {
    try (KafkaShareConsumer<String, String> c = s.consumer(group, id, Share.EXPLICIT)) {
      c.subscribe(List.of(topic));
      while (!stop.get()) {
        for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(500))) {
          String prev = acceptedBy.putIfAbsent(Share.where(r), id);
          if (prev != null) errors.add(Share.where(r) + " delivered to " + id + " after " + prev + " accepted it");
          if (Share.deliveries(r) != 1) errors.add(Share.where(r) + " delivered to " + id + " with count " + Share.deliveries(r));
          Share.sleep(10);
          c.acknowledge(r);
        }
        Share.commitOk(c);
      }
    } catch (RuntimeException e) {
      errors.add(id + ": " + e);
    }
  }
}
