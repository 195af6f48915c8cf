package sluice.mm2;

import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.connect.mirror.RemoteClusterUtils;

/**
 * The MirrorMaker 2 scenarios' client, with output made to be compared by the scripts:
 *
 * <pre>
 *   produce   BOOTSTRAP TOPIC PARTITIONS FROM COUNT   records FROM..FROM+COUNT-1: record i goes
 *                                                     to partition i % PARTITIONS, key k&lt;i&gt;,
 *                                                     value v&lt;i&gt;; acks=all, idempotent
 *   consume   BOOTSTRAP GROUP TOPIC RESET COUNT IDLE_S  the group reads until it has COUNT
 *                                                     records and then nothing more for 3 s, or
 *                                                     nothing for IDLE_S; prints "partition
 *                                                     offset value" per record, commits after
 *                                                     each batch and at the end, prints its
 *                                                     positions as "position"
 *   committed BOOTSTRAP GROUP                         the group's committed offsets
 *   translate TARGET_BOOTSTRAP SOURCE_ALIAS GROUP     RemoteClusterUtils.translateOffsets: the
 *                                                     group's offsets read from the target's
 *                                                     SOURCE_ALIAS.checkpoints.internal
 *   topic     BOOTSTRAP TOPIC                         partition count and the configs set on
 *                                                     the topic (DYNAMIC_TOPIC_CONFIG)
 *   acls      BOOTSTRAP                               every ACL binding, one per line, sorted
 *   await     BOOTSTRAP TOPIC COUNT TIMEOUT_S         polls the topic's end offsets (ListOffsets,
 *                                                     every 200 ms, one JVM: little load) until
 *                                                     they add up to COUNT; prints "first MS"
 *                                                     when records first appear and "done MS
 *                                                     RECORDS" (epoch milliseconds)
 * </pre>
 *
 * RESET is the consumer's auto.offset.reset: a consumer that fails over uses "none", so a
 * group without translated offsets fails instead of silently starting somewhere.
 */
public final class Tool {
  public static void main(String[] args) throws Exception {
    PrintStream out = System.out;
    switch (args[0]) {
      case "produce" -> produce(args[1], args[2], Integer.parseInt(args[3]),
          Long.parseLong(args[4]), Long.parseLong(args[5]), out);
      case "consume" -> consume(args[1], args[2], args[3], args[4], Long.parseLong(args[5]),
          Integer.parseInt(args[6]), out);
      case "committed" -> committed(args[1], args[2], out);
      case "translate" -> translate(args[1], args[2], args[3], out);
      case "topic" -> topic(args[1], args[2], out);
      case "acls" -> acls(args[1], out);
      case "await" -> await(args[1], args[2], Long.parseLong(args[3]), Integer.parseInt(args[4]), out);
      default -> throw new IllegalArgumentException("unknown command " + args[0]);
    }
  }

  static Properties base(String bootstrap) {
    Properties p = new Properties();
    p.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    return p;
  }

  static void produce(String bootstrap, String topic, int partitions, long from, long count,
      PrintStream out) throws Exception {
    Properties p = base(bootstrap);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
    p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
    try (KafkaProducer<String, String> producer =
        new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
      List<Future<RecordMetadata>> sent = new ArrayList<>();
      for (long i = from; i < from + count; i++) {
        sent.add(producer.send(new ProducerRecord<>(topic, (int) (i % partitions), "k" + i, "v" + i)));
      }
      for (Future<RecordMetadata> f : sent) f.get();
    }
    out.println("produced " + count);
  }

  static void consume(String bootstrap, String group, String topic, String reset, long count,
      int idleSeconds, PrintStream out) {
    Properties p = base(bootstrap);
    p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, reset);
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    try (KafkaConsumer<String, String> consumer =
        new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
      consumer.subscribe(Collections.singletonList(topic));
      long read = 0;
      long lastRecord = System.nanoTime();
      while (true) {
        var records = consumer.poll(Duration.ofMillis(200));
        for (ConsumerRecord<String, String> r : records) {
          out.println(r.partition() + " " + r.offset() + " " + r.value());
          read++;
          lastRecord = System.nanoTime();
        }
        // As an application does: each batch processed, its offsets committed.
        if (!records.isEmpty()) consumer.commitSync();
        long idle = (System.nanoTime() - lastRecord) / 1_000_000_000L;
        // Past COUNT keep reading a little: a record read twice or one too many must show.
        if ((read >= count && idle >= 3) || idle >= idleSeconds) break;
      }
      consumer.commitSync();
      Map<TopicPartition, Long> positions = new TreeMap<>(Tool::compare);
      for (TopicPartition tp : consumer.assignment()) positions.put(tp, consumer.position(tp));
      positions.forEach((tp, o) -> out.println("position " + tp.partition() + " " + o));
    }
  }

  static int compare(TopicPartition a, TopicPartition b) {
    int c = a.topic().compareTo(b.topic());
    return c != 0 ? c : Integer.compare(a.partition(), b.partition());
  }

  static void committed(String bootstrap, String group, PrintStream out) throws Exception {
    try (Admin admin = Admin.create(base(bootstrap))) {
      Map<TopicPartition, OffsetAndMetadata> offsets =
          admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
      print(offsets, out);
    }
  }

  static void translate(String target, String sourceAlias, String group, PrintStream out)
      throws Exception {
    Map<String, Object> props = new TreeMap<>();
    props.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, target);
    print(RemoteClusterUtils.translateOffsets(props, sourceAlias, group, Duration.ofSeconds(20)), out);
  }

  static void print(Map<TopicPartition, OffsetAndMetadata> offsets, PrintStream out) {
    Map<TopicPartition, OffsetAndMetadata> sorted = new TreeMap<>(Tool::compare);
    sorted.putAll(offsets);
    sorted.forEach((tp, o) -> out.println(tp.topic() + " " + tp.partition() + " " + o.offset()));
  }

  static void topic(String bootstrap, String topic, PrintStream out) throws Exception {
    try (Admin admin = Admin.create(base(bootstrap))) {
      TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
      out.println("partitions " + d.partitions().size());
      ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, topic);
      Config config = admin.describeConfigs(List.of(r)).all().get().get(r);
      List<String> set = new ArrayList<>();
      for (ConfigEntry e : config.entries()) {
        if (e.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG) set.add(e.name() + "=" + e.value());
      }
      Collections.sort(set);
      set.forEach(out::println);
    }
  }

  static void await(String bootstrap, String topic, long count, int timeoutSeconds, PrintStream out)
      throws Exception {
    long deadline = System.currentTimeMillis() + timeoutSeconds * 1000L;
    boolean first = false;
    try (Admin admin = Admin.create(base(bootstrap))) {
      while (System.currentTimeMillis() < deadline) {
        long total = 0;
        try {
          TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
          Map<TopicPartition, OffsetSpec> specs = new TreeMap<>(Tool::compare);
          d.partitions().forEach(p -> specs.put(new TopicPartition(topic, p.partition()), OffsetSpec.latest()));
          for (var info : admin.listOffsets(specs).all().get().values()) total += info.offset();
        } catch (ExecutionException e) {
          if (!(e.getCause() instanceof UnknownTopicOrPartitionException)) throw e;
        }
        long now = System.currentTimeMillis();
        if (!first && total > 0) {
          out.println("first " + now);
          first = true;
        }
        if (total >= count) {
          out.println("done " + now + " " + total);
          return;
        }
        Thread.sleep(200);
      }
    }
    throw new IllegalStateException(topic + " did not reach " + count + " records in " + timeoutSeconds + " s");
  }

  static void acls(String bootstrap, PrintStream out) throws Exception {
    try (Admin admin = Admin.create(base(bootstrap))) {
      List<String> lines = new ArrayList<>();
      for (AclBinding b : admin.describeAcls(AclBindingFilter.ANY).values().get()) {
        lines.add(String.join(" ", b.pattern().resourceType().toString(), b.pattern().patternType().toString(),
            b.pattern().name(), b.entry().principal(), b.entry().host(),
            b.entry().operation().toString(), b.entry().permissionType().toString()));
      }
      Collections.sort(lines);
      lines.forEach(out::println);
    }
  }
}
