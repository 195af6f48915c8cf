package sluice.interop;

/** A check in a scenario did not hold; the message says which and with what values. */
final class ScenarioFailed extends Exception {
    ScenarioFailed(String message) {
        super(message);
    }
}
