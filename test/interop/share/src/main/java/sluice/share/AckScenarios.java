package sluice.share;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;

/** Implicit and explicit acknowledgement, and the client's answer to a double acknowledgement. */
final class AckScenarios {
  private static final int PER_PARTITION = 5;

  private AckScenarios() {}

  /**
   * Implicit mode (the default): each poll accepts what the previous one returned, close
   * accepts the last batch. Ten records on two partitions arrive once each with delivery
   * count 1; a second poll round and a new consumer of the group get nothing; the
   * partitions' lag (ListShareGroupOffsets) reaches 0: every record accepted.
   */
  static void implicit(Share s, String topic, String group) {
    prepare(s, topic, group);
    List<ConsumerRecord<String, String>> got;
    try (KafkaShareConsumer<String, String> c = s.consumer(group, group + "-1", Map.of())) {
      c.subscribe(List.of(topic));
      got = Share.pollFor(c, 2 * PER_PARTITION, Duration.ofSeconds(60), false);
      expectOnceEach(s, got, "first poll round");
      List<ConsumerRecord<String, String>> again = Share.pollFor(c, 1, Duration.ofSeconds(3), false);
      if (!again.isEmpty()) throw Share.fail("second poll round got " + Share.offsetsOf(again));
      s.say("second poll round (3 s) got nothing");
    }
    nothingForNewMember(s, topic, group, Map.of());
    s.awaitNoLag(group, topic, 2, Duration.ofSeconds(15));
  }

  /**
   * share.acknowledgement.mode=explicit: every record accepted with acknowledge(record)
   * and commitSync (every partition's result without error); nothing redelivered to the
   * same consumer or a new one; lag 0 on both partitions.
   */
  static void explicit(Share s, String topic, String group) {
    prepare(s, topic, group);
    try (KafkaShareConsumer<String, String> c = s.consumer(group, group + "-1", Share.EXPLICIT)) {
      c.subscribe(List.of(topic));
      List<ConsumerRecord<String, String>> got = Share.pollFor(c, 2 * PER_PARTITION, Duration.ofSeconds(60), true);
      expectOnceEach(s, got, "accepted and committed");
      List<ConsumerRecord<String, String>> again = Share.pollFor(c, 1, Duration.ofSeconds(3), true);
      if (!again.isEmpty()) throw Share.fail("redelivered after commitSync: " + Share.offsetsOf(again));
      s.say("polling 3 s more got nothing");
    }
    nothingForNewMember(s, topic, group, Share.EXPLICIT);
    s.awaitNoLag(group, topic, 2, Duration.ofSeconds(15));
  }

  /**
   * Explicit mode: acknowledging a record again. Before the commit the client takes a
   * second acknowledge (the last type wins; printed, not checked: nothing reaches the
   * broker yet). Once commitSync has sent the acknowledgement, acknowledging the record
   * again is refused by the client with IllegalStateException, and the record stays
   * accepted: the partition's lag is 0.
   */
  static void doubleAck(Share s, String topic, String group) {
    s.createTopic(topic, 1);
    s.groupConfigs(group, Map.of("share.auto.offset.reset", "earliest"));
    s.produce(topic, 0, 1, "v");
    try (KafkaShareConsumer<String, String> c = s.consumer(group, group + "-1", Share.EXPLICIT)) {
      c.subscribe(List.of(topic));
      List<ConsumerRecord<String, String>> got = Share.pollFor(c, 1, Duration.ofSeconds(60), false);
      if (got.size() != 1) throw Share.fail("got " + got.size() + " records, want 1");
      ConsumerRecord<String, String> r = got.get(0);
      c.acknowledge(r);
      try {
        c.acknowledge(r);
        s.say("a second acknowledge of " + Share.where(r) + " before the commit is taken by the client");
      } catch (IllegalStateException e) {
        s.say("a second acknowledge of " + Share.where(r) + " before the commit is refused: " + e.getMessage());
      }
      Share.commitOk(c);
      try {
        c.acknowledge(r);
        throw Share.fail("acknowledging " + Share.where(r) + " after commitSync was taken");
      } catch (IllegalStateException e) {
        s.say("acknowledging " + Share.where(r) + " after commitSync refused by the client: "
            + e.getClass().getSimpleName() + ": " + e.getMessage());
      }
    }
    s.awaitNoLag(group, topic, 1, Duration.ofSeconds(15));
  }

  private static void prepare(Share s, String topic, String group) {
    s.createTopic(topic, 2);
    s.groupConfigs(group, Map.of("share.auto.offset.reset", "earliest"));
    s.produce(topic, 0, PER_PARTITION, "p0");
    s.produce(topic, 1, PER_PARTITION, "p1");
    s.say("produced " + PER_PARTITION + " records to each of 2 partitions");
  }

  private static void expectOnceEach(Share s, List<ConsumerRecord<String, String>> got, String what) {
    Set<String> seen = new HashSet<>();
    for (ConsumerRecord<String, String> r : got) {
      if (!seen.add(Share.where(r))) throw Share.fail(what + ": " + Share.where(r) + " delivered twice");
      if (Share.deliveries(r) != 1) throw Share.fail(what + ": " + Share.where(r) + " delivery count " + Share.deliveries(r));
    }
    if (got.size() != 2 * PER_PARTITION) {
      throw Share.fail(what + ": got " + got.size() + " of " + 2 * PER_PARTITION + " records within 60 s: " + Share.offsetsOf(got));
    }
    s.say(what + ": " + got.size() + " records, each once, delivery count 1: " + Share.offsetsOf(got));
  }

  private static void nothingForNewMember(Share s, String topic, String group, Map<String, Object> extra) {
    try (KafkaShareConsumer<String, String> c = s.consumer(group, group + "-2", extra)) {
      c.subscribe(List.of(topic));
      List<ConsumerRecord<String, String>> again = new ArrayList<>();
      s.pollUntilAssigned(c, group, group + "-2", again, Duration.ofSeconds(30));
      again.addAll(Share.pollFor(c, 1, Duration.ofSeconds(3), false));
      if (!again.isEmpty()) throw Share.fail("a new consumer of the group got " + Share.offsetsOf(again));
      s.say("a new consumer of the group, once assigned, polled 3 s more and got nothing");
    }
  }
}
