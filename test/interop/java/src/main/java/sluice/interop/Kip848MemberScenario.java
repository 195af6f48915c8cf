package sluice.interop;

import java.io.IOException;
import java.io.InputStream;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.TopicPartition;

/**
 * One KIP-848 member as a process of its own, for the scenarios and scripts that kill it
 * (kill -9 of the JVM) or mix it with another client: a {@link Kip848ThreadMember}
 * subscribed to TOPIC in GROUP with client id NAME (and group.instance.id INSTANCE unless
 * "-"), reporting on standard output, one line each:
 * <pre>
 *   assigned TOPIC:P,TOPIC:P     its assignment, after every change (empty: "assigned ")
 *   read TOPIC P OFFSET VALUE
 *   committed TOPIC P NEXT       after a successful commit
 *   lost TOPIC P                 revoked or lost
 * </pre>
 * It runs until its standard input ends, then closes the consumer (leaving the group).
 */
final class Kip848MemberScenario implements Scenario {
    @Override
    public String usage() {
        return "TOPIC GROUP NAME INSTANCE|-  (reports on stdout until stdin ends)";
    }

    @Override
    public void run(String bootstrap, String[] args) throws Exception {
        Args.expect(args, 4, this);
        Map<String, String> extra = new HashMap<>();
        if (!args[3].equals("-")) {
            extra.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, args[3]);
        }
        Kip848ThreadMember m = new Kip848ThreadMember(args[2], bootstrap, args[1], extra,
            Kip848ThreadMember.byTopics(List.of(args[0])), new Printer());
        m.start();
        InputStream in = System.in;
        try {
            while (in.read() != -1) {
                // Only the end of input matters.
            }
        } catch (IOException e) {
            System.err.println("stdin: " + e);
        }
        m.stop();
        m.rethrow();
    }

    /** Prints the history lines; println on System.out is synchronized and flushed. */
    private static final class Printer implements Kip848History {
        @Override
        public void read(String member, TopicPartition tp, long offset, String value) {
            System.out.println("read " + tp.topic() + " " + tp.partition() + " " + offset + " " + value);
        }

        @Override
        public void committed(String member, TopicPartition tp, long next) {
            System.out.println("committed " + tp.topic() + " " + tp.partition() + " " + next);
        }

        @Override
        public void lost(String member, TopicPartition tp) {
            System.out.println("lost " + tp.topic() + " " + tp.partition());
        }

        @Override
        public void assigned(String member, Set<TopicPartition> now) {
            TreeSet<String> s = new TreeSet<>();
            now.forEach(tp -> s.add(tp.topic() + ":" + tp.partition()));
            System.out.println("assigned " + String.join(",", s));
        }
    }
}
