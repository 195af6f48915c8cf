package sluice.share;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The 3-node fault test's client side (test/interop/share_fault_test.sh kills the nodes).
 *
 * fault-setup writes records 0..N-1 (the value is the id) round-robin over the partitions
 * of a new topic (replication factor 3, min.insync.replicas=2) with an idempotent acks=all
 * producer, sets the group's configs, and prints for each partition the __share_group_state
 * partition holding its share state (Kafka's mapping: abs(hash("group:topicId:partition"))
 * mod the state topic's partition count), as "state-partition P S".
 *
 * fault-consume runs share consumers (explicit mode, one thread each) that accept every
 * record and commitSync, paced to at most PACE records a second in all so the kills land
 * mid-stream; each writes DIR/CLIENT.seen (every delivery: id, partition@offset, delivery
 * count) and DIR/CLIENT.accepted (every id whose acceptance the acknowledgement commit
 * callback confirmed). It prints "progress ..." each second and stops once DIR/kills-done
 * exists, QUIET seconds have passed since then without a delivery and every id was seen
 * (or after MAX seconds: a failure). Then it closes the consumers, checks the group's lag
 * is 0 on every partition (ListShareGroupOffsets, when the broker serves it) and prints the
 * counts; violations fail it.
 */
final class Fault {
  private Fault() {}

  static void setup(Share s, String topic, String group, int partitions, int n, int lockMs, int statePartitions) {
    NewTopic t = new NewTopic(topic, partitions, (short) 3).configs(Map.of("min.insync.replicas", "2"));
    Share.get(s.admin.createTopics(List.of(t)).all(), "create topic " + topic);
    s.say("topic " + topic + " created: " + partitions + " partitions, replication factor 3, min.insync.replicas=2");
    s.groupConfigs(group, Map.of("share.auto.offset.reset", "earliest", "share.record.lock.duration.ms", String.valueOf(lockMs)));
    produce(s, topic, partitions, n);
    TopicDescription d = Share.get(s.admin.describeTopics(List.of(topic)).allTopicNames(), "describe " + topic).get(topic);
    for (int p = 0; p < partitions; p++) {
      String key = group + ":" + d.topicId() + ":" + p;
      int h = key.hashCode();
      int abs = h == Integer.MIN_VALUE ? 0 : Math.abs(h);
      System.out.println("state-partition " + p + " " + (abs % statePartitions));
    }
  }

  private static void produce(Share s, String topic, int partitions, int n) {
    AtomicReference<Exception> err = new AtomicReference<>();
    AtomicLong acked = new AtomicLong();
    long started = System.nanoTime();
    Properties props = new Properties();
    props.put("bootstrap.servers", s.bootstrap);
    props.put("key.serializer", StringSerializer.class.getName());
    props.put("value.serializer", StringSerializer.class.getName());
    props.put("enable.idempotence", "true");
    props.put("acks", "all");
    props.put("linger.ms", "5");
    try (KafkaProducer<String, String> p = new KafkaProducer<>(props)) {
      for (int i = 0; i < n && err.get() == null; i++) {
        p.send(new ProducerRecord<>(topic, i % partitions, null, String.valueOf(i)), (md, e) -> {
          if (e != null) err.compareAndSet(null, e);
          else acked.incrementAndGet();
        });
      }
      p.flush();
    }
    if (err.get() != null) throw Share.fail("produce: " + err.get());
    if (acked.get() != n) throw Share.fail("produce: " + acked.get() + " of " + n + " records acknowledged");
    s.say(n + " records written (idempotent, acks=all) in " + String.format("%.1fs", (System.nanoTime() - started) / 1e9));
  }

  static void consume(Share s, String topic, String group, int consumers, int n, Path dir, int pace,
      int quietS, int maxS, int limit) throws Exception {
    FaultLedger ledger = new FaultLedger();
    AtomicBoolean stop = new AtomicBoolean();
    ConcurrentLinkedQueue<String> died = new ConcurrentLinkedQueue<>();
    Pace pacer = new Pace(pace);
    List<Thread> threads = new ArrayList<>();
    for (int i = 1; i <= consumers; i++) {
      String client = group + "-" + i;
      Thread t = new Thread(() -> {
        try {
          work(s, topic, group, client, dir, ledger, pacer, stop);
        } catch (Throwable e) {
          died.add(client + ": " + e);
        }
      }, client);
      t.start();
      threads.add(t);
    }
    long started = System.nanoTime();
    Long killsDoneAt = null;
    String why = null;
    while (why == null) {
      Share.sleep(1000);
      double elapsed = (System.nanoTime() - started) / 1e9;
      System.out.printf("progress seen=%d confirmed=%d at %.0fs%n", ledger.seen(), ledger.confirmed(), elapsed);
      System.out.flush();
      if (!died.isEmpty()) why = "a consumer thread died: " + died;
      else if (elapsed > maxS) why = "not done within " + maxS + "s";
      if (killsDoneAt == null && Files.exists(dir.resolve("kills-done"))) killsDoneAt = System.nanoTime();
      if (killsDoneAt != null && (System.nanoTime() - killsDoneAt) / 1e9 >= quietS
          && ledger.quietSeconds() >= quietS && ledger.seen() == n) {
        break;
      }
    }
    stop.set(true);
    for (Thread t : threads) t.join(30_000);
    s.say("consumers closed; " + ledger.failures());
    String lag = lag(s, group, topic);
    Map<String, Long> counts = ledger.counts(n, limit);
    s.say("counts: " + counts);
    for (String v : ledger.violations) s.say("violation: " + v);
    if (why != null) throw Share.fail(why);
    if (!ledger.clean()) throw Share.fail("acknowledged acceptances were not final (violations above)");
    if (counts.get("never-delivered") != 0) throw Share.fail(counts.get("never-delivered") + " records never delivered");
    if (lag != null) throw Share.fail(lag);
  }

  /** Null when the lag is 0 everywhere or the broker does not serve ListShareGroupOffsets. */
  private static String lag(Share s, String group, String topic) {
    int partitions = Share.get(s.admin.describeTopics(List.of(topic)).allTopicNames(), "describe").get(topic).partitions().size();
    try {
      s.awaitNoLag(group, topic, partitions, Duration.ofSeconds(30));
      return null;
    } catch (Share.Failed e) {
      if (e.getMessage().contains(UnsupportedVersionException.class.getSimpleName())) {
        s.say("ListShareGroupOffsets not served by this broker: lag not checked (" + e.getMessage() + ")");
        return null;
      }
      return e.getMessage();
    }
  }

  private static void work(Share s, String topic, String group, String client, Path dir, FaultLedger ledger,
      Pace pacer, AtomicBoolean stop) throws IOException {
    // The writers outlive the consumer: close() may still run the acknowledgement callback.
    try (BufferedWriter seen = Files.newBufferedWriter(dir.resolve(client + ".seen"));
        BufferedWriter accepted = Files.newBufferedWriter(dir.resolve(client + ".accepted"))) {
      KafkaShareConsumer<String, String> c = s.consumer(group, client, Share.EXPLICIT);
      try {
        consumeLoop(c, topic, client, seen, accepted, ledger, pacer, stop);
      } finally {
        c.close(Duration.ofSeconds(15));
      }
    }
  }

  private static void consumeLoop(KafkaShareConsumer<String, String> c, String topic, String client,
      BufferedWriter seen, BufferedWriter accepted, FaultLedger ledger, Pace pacer, AtomicBoolean stop) {
    c.setAcknowledgementCommitCallback((offsets, e) -> {
      for (String id : ledger.acknowledged(client, offsets, e)) write(accepted, System.nanoTime() + " " + id);
    });
    c.subscribe(List.of(topic));
    while (!stop.get()) {
      ConsumerRecords<String, String> got;
      try {
        got = c.poll(Duration.ofMillis(500));
      } catch (KafkaException e) {
        ledger.clientError("poll", e);
        Share.sleep(200);
        continue;
      }
      for (ConsumerRecord<String, String> r : got) {
        String id = ledger.delivered(r, client);
        write(seen, System.nanoTime() + " " + id + " " + Share.where(r) + " " + Share.deliveries(r));
        pacer.await();
        c.acknowledge(r, AcknowledgeType.ACCEPT);
      }
      if (got.isEmpty()) continue;
      try {
        c.commitSync(Duration.ofSeconds(30));
      } catch (KafkaException e) {
        ledger.clientError("commitSync", e);
      }
    }
  }

  private static void write(BufferedWriter w, String line) {
    try {
      w.write(line);
      w.newLine();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** At most perSecond records a second over all consumers. */
  static final class Pace {
    private final long nanosEach;
    private final AtomicLong next = new AtomicLong(System.nanoTime());

    Pace(int perSecond) {
      nanosEach = 1_000_000_000L / Math.max(1, perSecond);
    }

    void await() {
      long now = System.nanoTime();
      long slot = next.getAndUpdate(v -> Math.max(v, now - 50_000_000L) + nanosEach);
      long wait = slot - now;
      if (wait > 2_000_000L) Share.sleep(wait / 1_000_000L);
    }
  }
}
