package sluice.share;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.FeatureMetadata;
import org.apache.kafka.clients.admin.FinalizedVersionRange;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.SupportedVersionRange;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.admin.ShareMemberDescription;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * What the share-group scenarios have in common: one Admin client, topics, group configs
 * set the way a Kafka user sets them (incrementalAlterConfigs on the GROUP resource), a
 * producer, share consumers with the client's defaults plus what a scenario names, and
 * bounded waits. Every wait has a deadline: a broker that does not serve share groups must
 * make a scenario fail with a message, never hang.
 */
final class Share implements AutoCloseable {
  /** A scenario's failed expectation; Main prints it and exits 1. */
  static final class Failed extends RuntimeException {
    Failed(String message) {
      super(message);
    }
  }

  final String bootstrap;
  final String name;
  final Admin admin;
  private final long started = System.nanoTime();

  Share(String bootstrap, String name) {
    this.bootstrap = bootstrap;
    this.name = name;
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30000);
    p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 15000);
    admin = Admin.create(p);
  }

  void say(String line) {
    System.out.printf("%s: [%.1fs] %s%n", name, (System.nanoTime() - started) / 1e9, line);
    System.out.flush();
  }

  static Failed fail(String message) {
    return new Failed(message);
  }

  static <T> T get(Future<T> f, String what) {
    try {
      return f.get(30, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      throw fail(what + ": " + e.getCause());
    } catch (Exception e) {
      throw fail(what + ": " + e);
    }
  }

  /** Fails unless the cluster has share.version finalized at 1 or more (KIP-932 enabled). */
  void shareVersion() {
    FeatureMetadata fm = get(admin.describeFeatures().featureMetadata(), "describeFeatures");
    FinalizedVersionRange v = fm.finalizedFeatures().get("share.version");
    SupportedVersionRange sup = fm.supportedFeatures().get("share.version");
    say("share.version finalized " + (v == null ? "absent" : v.maxVersionLevel())
        + ", supported " + (sup == null ? "absent" : sup.minVersion() + ".." + sup.maxVersion()));
    if (v == null || v.maxVersionLevel() < 1) throw fail("share.version is not finalized at 1 or more: share groups are off");
  }

  void createTopic(String topic, int partitions) {
    get(admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all(), "create topic " + topic);
    say("topic " + topic + " created with " + partitions + " partition(s)");
  }

  /** Sets group configs as `kafka-configs --alter --entity-type groups` does. */
  void groupConfigs(String group, Map<String, String> configs) {
    List<AlterConfigOp> ops = new ArrayList<>();
    for (Map.Entry<String, String> e : new TreeMap<>(configs).entrySet()) {
      ops.add(new AlterConfigOp(new ConfigEntry(e.getKey(), e.getValue()), AlterConfigOp.OpType.SET));
    }
    ConfigResource res = new ConfigResource(ConfigResource.Type.GROUP, group);
    get(admin.incrementalAlterConfigs(Map.of(res, ops)).all(), "incrementalAlterConfigs GROUP " + group);
    say("group " + group + " configs set: " + new TreeMap<>(configs));
  }

  KafkaProducer<String, String> producer() {
    Properties p = new Properties();
    p.put("bootstrap.servers", bootstrap);
    p.put("key.serializer", StringSerializer.class.getName());
    p.put("value.serializer", StringSerializer.class.getName());
    p.put("delivery.timeout.ms", 30000);
    p.put("request.timeout.ms", 15000);
    return new KafkaProducer<>(p);
  }

  /** Writes n records "prefix-i" to the partition, each acknowledged by the broker. */
  void produce(String topic, int partition, int n, String prefix) {
    try (KafkaProducer<String, String> producer = producer()) {
      produce(producer, topic, partition, n, prefix);
    }
  }

  static void produce(KafkaProducer<String, String> producer, String topic, int partition, int n, String prefix) {
    List<Future<RecordMetadata>> sent = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      sent.add(producer.send(new ProducerRecord<>(topic, partition, null, prefix + "-" + i)));
    }
    producer.flush();
    for (Future<RecordMetadata> f : sent) get(f, "produce to " + topic + "-" + partition);
  }

  /** A share consumer with the client's defaults, the group and client id, and extra. */
  KafkaShareConsumer<String, String> consumer(String group, String clientId, Map<String, Object> extra) {
    Map<String, Object> c = new HashMap<>();
    c.put("bootstrap.servers", bootstrap);
    c.put("group.id", group);
    c.put("client.id", clientId);
    c.put("key.deserializer", StringDeserializer.class.getName());
    c.put("value.deserializer", StringDeserializer.class.getName());
    c.putAll(extra);
    return new KafkaShareConsumer<>(c);
  }

  static final Map<String, Object> EXPLICIT = Map.of("share.acknowledgement.mode", "explicit");

  /** Polls until want records arrived or the deadline passed; returns what arrived. */
  static List<ConsumerRecord<String, String>> pollFor(
      KafkaShareConsumer<String, String> c, int want, Duration limit, boolean acceptEach) {
    List<ConsumerRecord<String, String>> got = new ArrayList<>();
    long deadline = System.nanoTime() + limit.toNanos();
    while (got.size() < want && System.nanoTime() < deadline) {
      for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(500))) {
        got.add(r);
        if (acceptEach) c.acknowledge(r);
      }
      if (acceptEach) commitOk(c);
    }
    return got;
  }

  /** commitSync, failing on any partition's error. */
  static void commitOk(KafkaShareConsumer<String, String> c) {
    Map<TopicIdPartition, Optional<KafkaException>> res = c.commitSync(Duration.ofSeconds(30));
    for (Map.Entry<TopicIdPartition, Optional<KafkaException>> e : res.entrySet()) {
      if (e.getValue().isPresent()) {
        throw fail("commitSync " + e.getKey() + ": " + e.getValue().get());
      }
    }
  }

  static String where(ConsumerRecord<?, ?> r) {
    return r.topic() + "-" + r.partition() + "@" + r.offset();
  }

  static int deliveries(ConsumerRecord<?, ?> r) {
    return r.deliveryCount().map(Short::intValue).orElseThrow(() -> fail("record " + where(r) + " has no delivery count"));
  }

  /** The share-partition start offset and lag of each partition of the topic. */
  Map<Integer, SharePartitionOffsetInfo> offsets(String group, String topic, int partitions) {
    List<TopicPartition> tps = new ArrayList<>();
    for (int p = 0; p < partitions; p++) tps.add(new TopicPartition(topic, p));
    ListShareGroupOffsetsSpec spec = new ListShareGroupOffsetsSpec().topicPartitions(tps);
    Map<TopicPartition, SharePartitionOffsetInfo> got =
        get(admin.listShareGroupOffsets(Map.of(group, spec)).partitionsToOffsetInfo(group), "listShareGroupOffsets " + group);
    Map<Integer, SharePartitionOffsetInfo> out = new TreeMap<>();
    for (Map.Entry<TopicPartition, SharePartitionOffsetInfo> e : got.entrySet()) {
      if (e.getValue() != null) out.put(e.getKey().partition(), e.getValue());
    }
    return out;
  }

  static String describe(Map<Integer, SharePartitionOffsetInfo> offsets) {
    StringBuilder b = new StringBuilder();
    for (Map.Entry<Integer, SharePartitionOffsetInfo> e : offsets.entrySet()) {
      b.append(b.length() == 0 ? "" : ", ").append("p").append(e.getKey())
          .append(" start ").append(e.getValue().startOffset())
          .append(" lag ").append(e.getValue().lag().map(String::valueOf).orElse("-"));
    }
    return b.toString();
  }

  /**
   * Waits until every partition of the topic has lag 0 in ListShareGroupOffsets: every
   * record below the end offset is delivery-complete (accepted, rejected or archived).
   * Kafka reports the start offset as persisted, which may stay behind records already
   * acknowledged; the lag is what says the group is done with them.
   */
  void awaitNoLag(String group, String topic, int partitions, Duration limit) {
    long deadline = System.nanoTime() + limit.toNanos();
    while (true) {
      Map<Integer, SharePartitionOffsetInfo> got = offsets(group, topic, partitions);
      boolean ok = got.size() == partitions;
      for (SharePartitionOffsetInfo info : got.values()) ok &= info.lag().orElse(-1L) == 0L;
      if (ok) {
        say("ListShareGroupOffsets: " + describe(got));
        return;
      }
      if (System.nanoTime() > deadline) {
        throw fail("lag of " + group + " on " + topic + " not 0 on every partition within " + limit.toSeconds() + "s: " + describe(got));
      }
      sleep(500);
    }
  }

  /** Prints the group's ListShareGroupOffsets answer for the topic. */
  void showOffsets(String group, String topic, int partitions, String when) {
    say("ListShareGroupOffsets " + when + ": " + describe(offsets(group, topic, partitions)));
  }

  /** The group's members by client id, once n members are there (each with an assignment). */
  Map<String, ShareMemberDescription> awaitMembers(String group, int n, Duration limit) {
    long deadline = System.nanoTime() + limit.toNanos();
    String last = "";
    while (System.nanoTime() < deadline) {
      ShareGroupDescription d = describeGroup(group);
      if (d == null) {
        sleep(250);
        continue;
      }
      Map<String, ShareMemberDescription> byClient = new TreeMap<>();
      for (ShareMemberDescription m : d.members()) {
        if (!m.assignment().topicPartitions().isEmpty()) byClient.put(m.clientId(), m);
      }
      last = d.groupState() + " with " + d.members().size() + " member(s), " + byClient.size() + " assigned";
      if (byClient.size() == n) return byClient;
      sleep(250);
    }
    throw fail("group " + group + " did not have " + n + " assigned members within " + limit.toSeconds() + "s (last: " + last + ")");
  }

  /** DescribeShareGroups of the group, or null while the group does not exist yet. */
  ShareGroupDescription describeGroup(String group) {
    try {
      return admin.describeShareGroups(List.of(group)).describedGroups().get(group).get(30, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof GroupIdNotFoundException) return null;
      throw fail("describeShareGroups " + group + ": " + e.getCause());
    } catch (Exception e) {
      throw fail("describeShareGroups " + group + ": " + e);
    }
  }

  /** Whether the client id is a member of the group with a non-empty assignment. */
  boolean assigned(String group, String clientId) {
    ShareGroupDescription d = describeGroup(group);
    if (d == null) return false;
    for (ShareMemberDescription m : d.members()) {
      if (m.clientId().equals(clientId) && !m.assignment().topicPartitions().isEmpty()) return true;
    }
    return false;
  }

  /**
   * Polls (the records go to got) until the consumer is an assigned member of the group:
   * "got nothing" means something only once the consumer could have been given records.
   */
  void pollUntilAssigned(KafkaShareConsumer<String, String> c, String group, String clientId,
      List<ConsumerRecord<String, String>> got, Duration limit) {
    long deadline = System.nanoTime() + limit.toNanos();
    while (!assigned(group, clientId)) {
      if (System.nanoTime() > deadline) throw fail(clientId + " not an assigned member of " + group + " within " + limit.toSeconds() + "s");
      for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(500))) got.add(r);
    }
    say(clientId + " is an assigned member of " + group);
  }

  static void await(String what, Duration limit, BooleanSupplier ok) {
    long deadline = System.nanoTime() + limit.toNanos();
    while (!ok.getAsBoolean()) {
      if (System.nanoTime() > deadline) throw fail("not within " + limit.toSeconds() + "s: " + what);
      sleep(200);
    }
  }

  static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw fail("interrupted");
    }
  }

  static String offsetsOf(Collection<ConsumerRecord<String, String>> records) {
    List<String> out = new ArrayList<>();
    for (ConsumerRecord<String, String> r : records) out.add(r.partition() + "@" + r.offset());
    return out.toString();
  }

  @Override
  public void close() {
    admin.close(Duration.ofSeconds(5));
  }
}
