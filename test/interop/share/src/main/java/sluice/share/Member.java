package sluice.share;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;

/**
 * A share-group member for the tools test: accepts (explicit mode, commitSync) exactly N
 * records, prints "consumed N", then stays a member without polling until its stdin ends,
 * then closes (leaving the group).
 */
final class Member {
  private Member() {}

  static void run(Share s, String topic, String group, String clientId, int n) throws IOException {
    try (KafkaShareConsumer<String, String> c = s.consumer(group, clientId, Share.EXPLICIT)) {
      c.subscribe(List.of(topic));
      List<ConsumerRecord<String, String>> got = Share.pollFor(c, n, Duration.ofSeconds(60), true);
      if (got.size() != n) throw Share.fail(clientId + " accepted " + got.size() + " records, want " + n);
      s.say("consumed " + got.size());
      while (System.in.read() >= 0) {
        // Idle: the consumer's background thread keeps heartbeating.
      }
      s.say("stdin ended; closing");
    }
  }
}
