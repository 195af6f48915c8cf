package sluice.interop;

/** One interop scenario: a named check run against a bootstrap address. */
interface Scenario {
    /** The arguments after the scenario name, for the usage text. */
    String usage();

    /**
     * Runs the scenario. Returns normally only when every check passed; any failure throws,
     * so the dispatcher turns it into a non-zero exit status.
     */
    void run(String bootstrap, String[] args) throws Exception;
}
