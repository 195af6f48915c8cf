package sluice.share;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.ShareMemberDescription;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;

/** AcknowledgeType.RELEASE and REJECT, in explicit acknowledgement mode. */
final class Redelivery {
  private Redelivery() {}

  /**
   * One record; consumer a acquires it, consumer b joins (and gets nothing: the only
   * record is a's). a releases it and commits, then stays a member without polling; b
   * then gets the record with delivery count 2 and accepts it. Both member ids are
   * printed (from DescribeShareGroups).
   */
  static void release(Share s, String topic, String group) {
    s.createTopic(topic, 1);
    s.groupConfigs(group, Map.of("share.auto.offset.reset", "earliest"));
    s.produce(topic, 0, 1, "v");
    String idA = group + "-a", idB = group + "-b";
    try (KafkaShareConsumer<String, String> a = s.consumer(group, idA, Share.EXPLICIT);
        KafkaShareConsumer<String, String> b = s.consumer(group, idB, Share.EXPLICIT)) {
      a.subscribe(List.of(topic));
      ConsumerRecord<String, String> first = one(Share.pollFor(a, 1, Duration.ofSeconds(60), false), idA, 1);
      s.showOffsets(group, topic, 1, "while " + idA + " holds it");
      b.subscribe(List.of(topic));
      List<ConsumerRecord<String, String>> early = new ArrayList<>();
      s.pollUntilAssigned(b, group, idB, early, Duration.ofSeconds(30));
      if (!early.isEmpty()) throw Share.fail(idB + " got " + Share.offsetsOf(early) + " while " + idA + " held the record");
      Map<String, ShareMemberDescription> members = s.awaitMembers(group, 2, Duration.ofSeconds(15));
      a.acknowledge(first, AcknowledgeType.RELEASE);
      Share.commitOk(a);
      s.say(idA + " (member " + members.get(idA).consumerId() + ") released " + Share.where(first) + " at delivery 1 and committed");
      List<ConsumerRecord<String, String>> got = Share.pollFor(b, 1, Duration.ofSeconds(30), false);
      ConsumerRecord<String, String> again = one(got, idB, 2);
      if (again.offset() != first.offset()) throw Share.fail(idB + " got " + Share.where(again) + ", not the released record");
      b.acknowledge(again);
      Share.commitOk(b);
      s.say(Share.where(again) + " redelivered to " + idB + " (member " + members.get(idB).consumerId() + ") with delivery count 2; accepted");
      List<ConsumerRecord<String, String>> more = Share.pollFor(b, 1, Duration.ofSeconds(2), true);
      if (!more.isEmpty()) throw Share.fail("after the accept " + idB + " got " + Share.offsetsOf(more));
    }
    s.awaitNoLag(group, topic, 1, Duration.ofSeconds(15));
  }

  /**
   * Three records; offset 1 is rejected, 0 and 2 accepted. Neither the same consumer
   * polling on nor a new consumer of the group gets anything; the partition's lag is 0
   * (the rejected record is archived, not waiting).
   */
  static void reject(Share s, String topic, String group) {
    s.createTopic(topic, 1);
    s.groupConfigs(group, Map.of("share.auto.offset.reset", "earliest"));
    s.produce(topic, 0, 3, "v");
    String idA = group + "-a", idB = group + "-b";
    try (KafkaShareConsumer<String, String> a = s.consumer(group, idA, Share.EXPLICIT)) {
      a.subscribe(List.of(topic));
      List<ConsumerRecord<String, String>> got = Share.pollFor(a, 3, Duration.ofSeconds(60), false);
      if (got.size() != 3) throw Share.fail(idA + " got " + Share.offsetsOf(got) + ", want offsets 0, 1 and 2");
      for (ConsumerRecord<String, String> r : got) {
        a.acknowledge(r, r.offset() == 1 ? AcknowledgeType.REJECT : AcknowledgeType.ACCEPT);
      }
      Share.commitOk(a);
      s.say(idA + " rejected 0@1, accepted 0@0 and 0@2, committed");
      List<ConsumerRecord<String, String>> more = Share.pollFor(a, 1, Duration.ofSeconds(3), true);
      if (!more.isEmpty()) throw Share.fail(idA + " got " + Share.offsetsOf(more) + " after the reject");
      s.say(idA + " polled 3 s more and got nothing");
    }
    try (KafkaShareConsumer<String, String> b = s.consumer(group, idB, Share.EXPLICIT)) {
      b.subscribe(List.of(topic));
      List<ConsumerRecord<String, String>> more = new ArrayList<>();
      s.pollUntilAssigned(b, group, idB, more, Duration.ofSeconds(30));
      more.addAll(Share.pollFor(b, 1, Duration.ofSeconds(3), true));
      if (!more.isEmpty()) throw Share.fail("new consumer " + idB + " got " + Share.offsetsOf(more) + " after the reject");
      s.say("new consumer " + idB + ", once assigned, polled 3 s more and got nothing");
    }
    s.awaitNoLag(group, topic, 1, Duration.ofSeconds(15));
  }

  private static ConsumerRecord<String, String> one(List<ConsumerRecord<String, String>> got, String id, int deliveries) {
    if (got.size() != 1) throw Share.fail(id + " got " + Share.offsetsOf(got) + ", want the one record");
    ConsumerRecord<String, String> r = got.get(0);
    if (Share.deliveries(r) != deliveries) {
      throw Share.fail(id + " got " + Share.where(r) + " with delivery count " + Share.deliveries(r) + ", want " + deliveries);
    }
    return r;
  }
}
