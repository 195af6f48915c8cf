package sluice.interop;

/** Positional argument parsing shared by the scenarios. */
final class Args {
    private Args() {
    }

    static void expect(String[] args, int count, Scenario scenario) throws ScenarioFailed {
        if (args.length != count) {
            throw new ScenarioFailed("expected arguments: " + scenario.usage());
        }
    }

    static long parseLong(String value, String name) throws ScenarioFailed {
        try {
            return Long.parseLong(value);
        } catch (NumberFormatException e) {
            throw new ScenarioFailed(name + " must be an integer, got '" + value + "'");
        }
    }

    static int parseInt(String value, String name) throws ScenarioFailed {
        long v = parseLong(value, name);
        if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
            throw new ScenarioFailed(name + " out of range: " + value);
        }
        return (int) v;
    }
}
