package sluice.share;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Share-group benchmarks (bench/share/share-throughput runs them against Sluice and the
 * pinned Kafka in turn). They measure, they do not judge: a run fails only when records
 * go missing or an acknowledgement errs. Results are printed as "RESULT key=value ..."
 * lines for the script.
 *
 * throughput: N records of SIZE bytes pre-produced round-robin into P partitions, then C
 * KafkaShareConsumers (one thread each, share.acknowledgement.mode=explicit, the client's
 * other defaults) each accept every record of a poll with acknowledge(record, ACCEPT) and
 * then commitSync(), as the KafkaShareConsumer javadoc's explicit example does. Timed
 * from the first record any consumer polled to the commitSync that made every offset
 * accepted. The broker's CPU (utime+stime of /proc/PID/stat) over the same window when a
 * PID is given, and this JVM's (the clients': they share the machine with the broker).
 *
 * redelivery: ROUNDS rounds on a 1-partition topic whose group has
 * share.record.lock.duration.ms=LOCK_MS. Each round produces K records; a fresh consumer
 * acquires them and stays silent (a member whose heartbeats go on, never polling or
 * acknowledging again), then a second fresh consumer polls until it has them all with
 * the delivery count one higher (2, unless the silent consumer's first poll already
 * showed more: counted as "unsurfaced", an acquisition the application never saw). A
 * record that comes back with a count higher still was taken at the expiry by the silent
 * consumer's own fetch, which its client keeps pending ahead of poll: counted as "raced",
 * not a sample. Per record: the time from the lock's expiry (the silent consumer's
 * poll return + LOCK_MS, so a little after the broker's acquisition: the figure errs low by
 * the fetch's return trip) to the poll that delivered it again.
 */
final class Bench {
  private Bench() {}

  static final Map<String, Object> BYTES = Map.of(
      "share.acknowledgement.mode", "explicit",
      "key.deserializer", ByteArrayDeserializer.class.getName(),
      "value.deserializer", ByteArrayDeserializer.class.getName());

  @SuppressWarnings("unchecked")
  static KafkaShareConsumer<byte[], byte[]> consumer(Share s, String group, String clientId, Map<String, Object> extra) {
    Map<String, Object> c = new HashMap<>(BYTES);
    c.putAll(extra);
    // Share.consumer sets String deserializers first; ours override them.
    return (KafkaShareConsumer<byte[], byte[]>) (KafkaShareConsumer<?, ?>) s.consumer(group, clientId, c);
  }

  /** Pre-produces n records of size bytes round-robin over the partitions, all acknowledged. */
  static void produce(Share s, String topic, int partitions, int n, int size, int from) {
    Map<String, Object> p = new HashMap<>();
    p.put("bootstrap.servers", s.bootstrap);
    p.put("key.serializer", ByteArraySerializer.class.getName());
    p.put("value.serializer", ByteArraySerializer.class.getName());
    p.put("linger.ms", 20);
    p.put("batch.size", 262144);
    p.put("delivery.timeout.ms", 120000);
    byte[] value = new byte[size];
    for (int i = 0; i < size; i++) value[i] = (byte) ('a' + i % 26);
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
      List<Future<RecordMetadata>> sent = new ArrayList<>();
      for (int i = from; i < from + n; i++) {
        sent.add(producer.send(new ProducerRecord<>(topic, i % partitions, null, value)));
        if (sent.size() >= 10000) {
          for (Future<RecordMetadata> f : sent) Share.get(f, "produce to " + topic);
          sent.clear();
        }
      }
      producer.flush();
      for (Future<RecordMetadata> f : sent) Share.get(f, "produce to " + topic);
    }
  }

  /** utime+stime of the process in clock ticks (100 per second on Linux), or -1. */
  static long cpuTicks(long pid) {
    if (pid <= 0) return -1;
    try {
      String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      return Long.parseLong(f[11]) + Long.parseLong(f[12]);
    } catch (Exception e) {
      return -1;
    }
  }

  static void throughput(Share s, String topic, String group, int n, int size, int partitions, int consumers, long pid)
      throws InterruptedException {
    s.createTopic(topic, partitions);
    long t0 = System.nanoTime();
    produce(s, topic, partitions, n, size, 0);
    s.say(n + " records of " + size + " bytes produced in " + (System.nanoTime() - t0) / 1_000_000 + " ms");
    s.groupConfigs(group, Map.of("share.auto.offset.reset", "earliest"));

    Set<Long> accepted = ConcurrentHashMap.newKeySet(n * 2);
    AtomicLong first = new AtomicLong();
    AtomicLong done = new AtomicLong();
    AtomicLong redelivered = new AtomicLong();
    AtomicLong cpuFirst = new AtomicLong(-1);
    AtomicLong selfFirst = new AtomicLong(-1);
    long[] perConsumer = new long[consumers];
    long[] firstAt = new long[consumers];
    Throwable[] errors = new Throwable[consumers];
    long deadline = System.nanoTime() + Duration.ofMinutes(10).toNanos();
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < consumers; i++) {
      final int me = i;
      Thread t = new Thread(() -> {
        try (KafkaShareConsumer<byte[], byte[]> c = consumer(s, group, group + "-" + me, Map.of())) {
          c.subscribe(List.of(topic));
          while (done.get() == 0 && System.nanoTime() < deadline) {
            ConsumerRecords<byte[], byte[]> recs = c.poll(Duration.ofMillis(200));
            if (recs.isEmpty()) continue;
            long now = System.nanoTime();
            if (first.compareAndSet(0, now)) {
              cpuFirst.set(cpuTicks(pid));
              selfFirst.set(cpuTicks(ProcessHandle.current().pid()));
            }
            if (firstAt[me] == 0) firstAt[me] = now;
            int fresh = 0;
            for (ConsumerRecord<byte[], byte[]> r : recs) {
              if (r.value().length != size) throw Share.fail("record " + Share.where(r) + " has " + r.value().length + " bytes");
              c.acknowledge(r, AcknowledgeType.ACCEPT);
              if (r.deliveryCount().orElse((short) 1) > 1) redelivered.incrementAndGet();
              if (accepted.add(((long) r.partition() << 40) | r.offset())) fresh++;
            }
            Map<TopicIdPartition, Optional<KafkaException>> res = c.commitSync(Duration.ofSeconds(30));
            for (Map.Entry<TopicIdPartition, Optional<KafkaException>> e : res.entrySet()) {
              if (e.getValue().isPresent()) throw Share.fail("commitSync " + e.getKey() + ": " + e.getValue().get());
            }
            perConsumer[me] += fresh;
            if (accepted.size() >= n) done.compareAndSet(0, System.nanoTime());
          }
        } catch (Throwable e) {
          errors[me] = e;
          done.compareAndSet(0, -1);
        }
      }, "share-bench-" + i);
      threads.add(t);
      t.start();
    }
    for (Thread t : threads) t.join();
    long cpuDone = cpuTicks(pid);
    long selfDone = cpuTicks(ProcessHandle.current().pid());
    for (Throwable e : errors) {
      if (e instanceof Share.Failed f) throw f;
      if (e != null) throw Share.fail("consumer thread: " + e);
    }
    if (done.get() <= 0) throw Share.fail("only " + accepted.size() + " of " + n + " records accepted within 10 minutes");
    double secs = (done.get() - first.get()) / 1e9;
    long lastJoin = Arrays.stream(firstAt).max().orElse(0);
    s.say("records accepted per consumer: " + Arrays.toString(perConsumer));
    s.say(String.format("every consumer had records %.2f s after the first record", (lastJoin - first.get()) / 1e9));
    double cpu = (cpuFirst.get() < 0 || cpuDone < 0) ? -1 : (cpuDone - cpuFirst.get()) / 100.0;
    double self = (selfFirst.get() < 0 || selfDone < 0) ? -1 : (selfDone - selfFirst.get()) / 100.0;
    System.out.printf("RESULT throughput records=%d seconds=%.3f rps=%.0f mbs=%.1f redelivered=%d broker_cpu_s=%.2f client_cpu_s=%.2f last_consumer_first_s=%.2f%n",
        n, secs, n / secs, (double) n * size / 1e6 / secs, redelivered.get(), cpu, self, (lastJoin - first.get()) / 1e9);
  }

  static void redelivery(Share s, String topic, String group, int rounds, int perRound, int lockMs) {
    s.createTopic(topic, 1);
    s.groupConfigs(group, Map.of(
        "share.auto.offset.reset", "earliest",
        "share.record.lock.duration.ms", String.valueOf(lockMs)));
    List<Double> delays = new ArrayList<>();
    int unsurfaced = 0;
    int raced = 0;
    for (int r = 0; r < rounds; r++) {
      produce(s, topic, 1, perRound, 1024, r * perRound);
      KafkaShareConsumer<byte[], byte[]> silent = consumer(s, group, group + "-silent-" + r, Map.of());
      KafkaShareConsumer<byte[], byte[]> taker = null;
      try {
        silent.subscribe(List.of(topic));
        Map<Long, Long> held = new HashMap<>();
        Map<Long, Integer> firstCount = new HashMap<>();
        long acquired = 0;
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (held.isEmpty() && System.nanoTime() < deadline) {
          for (ConsumerRecord<byte[], byte[]> rec : silent.poll(Duration.ofMillis(200))) {
            held.put(rec.offset(), 0L);
            firstCount.put(rec.offset(), Share.deliveries(rec));
            if (Share.deliveries(rec) != 1) {
              // An acquisition before this one never reached the application.
              unsurfaced++;
              s.say("round " + r + ": the silent consumer got " + Share.where(rec) + " with delivery count " + Share.deliveries(rec) + " on its first poll");
            }
          }
          acquired = System.nanoTime();
        }
        if (held.isEmpty()) throw Share.fail("round " + r + ": the silent consumer got nothing within 60 s");
        long expiry = acquired + lockMs * 1_000_000L;
        taker = consumer(s, group, group + "-taker-" + r, Map.of());
        taker.subscribe(List.of(topic));
        int got = 0;
        deadline = expiry + Duration.ofSeconds(60L + 2L * lockMs / 1000).toNanos();
        while (got < held.size() && System.nanoTime() < deadline) {
          ConsumerRecords<byte[], byte[]> recs = taker.poll(Duration.ofMillis(100));
          long now = System.nanoTime();
          for (ConsumerRecord<byte[], byte[]> rec : recs) {
            taker.acknowledge(rec, AcknowledgeType.ACCEPT);
            Long prev = held.get(rec.offset());
            if (prev == null || prev != 0L) continue;
            int want = firstCount.get(rec.offset()) + 1;
            held.put(rec.offset(), now);
            got++;
            if (Share.deliveries(rec) > want) {
              // The silent consumer's fetch, still pending in its client at the expiry,
              // took the record again (the client fetches ahead of poll); this delivery
              // followed a later expiry, so it is no sample.
              raced++;
              continue;
            }
            if (Share.deliveries(rec) != want) throw Share.fail("round " + r + ": " + Share.where(rec) + " delivery count " + Share.deliveries(rec) + ", want " + want);
            delays.add((now - expiry) / 1e6);
          }
          if (!recs.isEmpty()) Share.commitOk(castCommit(taker));
        }
        if (got < held.size()) throw Share.fail("round " + r + ": only " + got + " of " + held.size() + " records came back within 60 s of the lock's expiry");
        if (delays.isEmpty() && r == rounds - 1) throw Share.fail("no record came back with the next delivery count");
        long firstBack = held.values().stream().min(Long::compare).orElse(0L);
        s.say(String.format("round %d: %d records acquired and held; first back %.1f ms after the lock's expiry", r, held.size(), (firstBack - expiry) / 1e6));
      } finally {
        if (taker != null) taker.close(Duration.ofSeconds(5));
        silent.close(Duration.ofSeconds(5));
      }
    }
    List<Double> sorted = new ArrayList<>(delays);
    sorted.sort(Double::compare);
    System.out.printf("RESULT redelivery samples=%d median_ms=%.1f min_ms=%.1f max_ms=%.1f lock_ms=%d unsurfaced=%d raced=%d%n",
        sorted.size(), sorted.get(sorted.size() / 2), sorted.get(0), sorted.get(sorted.size() - 1), lockMs, unsurfaced, raced);
  }

  @SuppressWarnings("unchecked")
  private static KafkaShareConsumer<String, String> castCommit(KafkaShareConsumer<byte[], byte[]> c) {
    // commitOk only commits; the generic types do not matter to it.
    return (KafkaShareConsumer<String, String>) (KafkaShareConsumer<?, ?>) c;
  }
}
