package sluice.interop;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Dispatcher: {@code Main --bootstrap HOST:PORT SCENARIO ARGS...}. Each scenario is one class;
 * add a new one to {@link #scenarios()} (Streams and Connect scenarios go here too).
 * Exit status: 0 when the scenario passed, 1 when it failed, 2 on usage errors.
 */
public final class Main {
    private Main() {
    }

    static Map<String, Scenario> scenarios() {
        Map<String, Scenario> all = new LinkedHashMap<>();
        all.put("produce", new ProduceScenario());
        all.put("consume-assign", new ConsumeAssignScenario());
        all.put("consume-subscribe", new ConsumeSubscribeScenario());
        all.put("admin", new AdminScenario());
        all.put("consume-values", new ConsumeValuesScenario());
        all.put("admin-configs", new AdminConfigsScenario());
        all.put("group-rebalance", new GroupRebalanceScenario());
        all.put("produce-transactional", new ProduceTransactionalScenario());
        all.put("failover-produce-consume", new FailoverProduceConsumeScenario());
        all.put("consume-until-corrupt", new ConsumeUntilCorruptScenario());
        all.put("txn-produce-consume", new TransactionalProduceConsumeScenario());
        all.put("txn-fence", new TransactionalFencingScenario());
        all.put("txn-offsets", new TransactionalOffsetsScenario());
        all.put("kip848-churn", new Kip848ChurnScenario());
        all.put("kip848-member", new Kip848MemberScenario());
        all.put("kip848-kill", new Kip848KillScenario());
        all.put("kip848-static", new Kip848StaticScenario());
        all.put("kip848-regex", new Kip848RegexScenario());
        all.put("kip848-mixed", new Kip848MixedScenario());
        all.put("kip848-migration", new Kip848MigrationScenario());
        return all;
    }

    public static void main(String[] argv) {
        System.exit(run(argv));
    }

    static int run(String[] argv) {
        Map<String, Scenario> all = scenarios();
        if (argv.length < 3 || !argv[0].equals("--bootstrap") || !all.containsKey(argv[2])) {
            System.err.println("usage: --bootstrap HOST:PORT SCENARIO ARGS...");
            all.forEach((name, s) -> System.err.println("  " + name + " " + s.usage()));
            return 2;
        }
        String bootstrap = argv[1];
        String name = argv[2];
        String[] rest = java.util.Arrays.copyOfRange(argv, 3, argv.length);
        try {
            all.get(name).run(bootstrap, rest);
            System.out.println(name + ": PASS");
            return 0;
        } catch (ScenarioFailed e) {
            System.err.println(name + ": FAIL: " + e.getMessage());
            return 1;
        } catch (Exception e) {
            System.err.println(name + ": FAIL: " + e);
            e.printStackTrace(System.err);
            return 1;
        }
    }
}
