package sluice.share;

import java.util.Arrays;

/**
 * Entry point of the share-group scenarios: Main --bootstrap HOST:PORT SCENARIO ARGS...
 * Exit 0 when every expectation held, 1 with "FAIL: why" when one did not, 2 on misuse or
 * an unexpected exception (printed). The process always ends: System.exit stops any
 * client thread still running.
 */
public final class Main {
  private static final String USAGE = String.join("\n",
      "usage: --bootstrap HOST:PORT SCENARIO ARGS...",
      "  features                      share.version finalized at 1 or more (DescribeFeatures)",
      "  implicit TOPIC GROUP          implicit acknowledgement, nothing delivered twice",
      "  explicit TOPIC GROUP          accept each record and commitSync, nothing redelivered",
      "  five TOPIC GROUP              five consumers on a 2-partition topic all receive work",
      "  release TOPIC GROUP           a released record goes to another consumer, delivery count 2",
      "  reject TOPIC GROUP            a rejected record is never redelivered",
      "  lock-timeout TOPIC GROUP LOCK_MS LIMIT",
      "                                an unacknowledged record comes back after the lock and is",
      "                                archived after LIMIT deliveries",
      "  double-ack TOPIC GROUP        the client's answer to acknowledging a record twice",
      "  fault-setup TOPIC GROUP PARTITIONS N LOCK_MS STATE_PARTITIONS",
      "                                N records on a replicated topic, the group's configs, and",
      "                                the __share_group_state partition of each partition",
      "  fault-consume TOPIC GROUP CONSUMERS N DIR PACE QUIET_S MAX_S LIMIT",
      "                                share consumers accept every record while nodes are killed;",
      "                                counts and violations (see Fault)",
      "  member TOPIC GROUP CLIENT_ID N  accept N records, then stay a member (not polling) until",
      "                                stdin ends, then close",
      "  bench-throughput TOPIC GROUP N SIZE PARTITIONS CONSUMERS BROKER_PID   (bench/share)",
      "  bench-redelivery TOPIC GROUP ROUNDS PER_ROUND LOCK_MS                 (bench/share)");

  public static void main(String[] args) {
    int rc;
    try {
      rc = run(args);
    } catch (Share.Failed e) {
      System.out.println("FAIL: " + e.getMessage());
      rc = 1;
    } catch (Throwable t) {
      t.printStackTrace(System.out);
      rc = 2;
    }
    System.out.flush();
    System.exit(rc);
  }

  private static int run(String[] args) throws Exception {
    if (args.length < 3 || !args[0].equals("--bootstrap")) {
      System.err.println(USAGE);
      return 2;
    }
    String b = args[1];
    String scenario = args[2];
    String[] a = Arrays.copyOfRange(args, 3, args.length);
    try (Share s = new Share(b, scenario)) {
      switch (scenario) {
        case "features" -> s.shareVersion();
        case "implicit" -> AckScenarios.implicit(s, a[0], a[1]);
        case "explicit" -> AckScenarios.explicit(s, a[0], a[1]);
        case "five" -> FiveConsumers.run(s, a[0], a[1]);
        case "release" -> Redelivery.release(s, a[0], a[1]);
        case "reject" -> Redelivery.reject(s, a[0], a[1]);
        case "lock-timeout" -> LockTimeout.run(s, a[0], a[1], Integer.parseInt(a[2]), Integer.parseInt(a[3]));
        case "double-ack" -> AckScenarios.doubleAck(s, a[0], a[1]);
        case "fault-setup" -> Fault.setup(s, a[0], a[1], Integer.parseInt(a[2]), Integer.parseInt(a[3]),
            Integer.parseInt(a[4]), Integer.parseInt(a[5]));
        case "fault-consume" -> Fault.consume(s, a[0], a[1], Integer.parseInt(a[2]), Integer.parseInt(a[3]),
            java.nio.file.Path.of(a[4]), Integer.parseInt(a[5]), Integer.parseInt(a[6]), Integer.parseInt(a[7]),
            Integer.parseInt(a[8]));
        case "member" -> Member.run(s, a[0], a[1], a[2], Integer.parseInt(a[3]));
        case "bench-throughput" -> Bench.throughput(s, a[0], a[1], Integer.parseInt(a[2]), Integer.parseInt(a[3]),
            Integer.parseInt(a[4]), Integer.parseInt(a[5]), Long.parseLong(a[6]));
        case "bench-redelivery" -> Bench.redelivery(s, a[0], a[1], Integer.parseInt(a[2]), Integer.parseInt(a[3]), Integer.parseInt(a[4]));
        default -> {
          System.err.println(USAGE);
          return 2;
        }
      }
    }
    return 0;
  }
}
