package sluice.interop;

import java.util.Set;

import org.apache.kafka.common.TopicPartition;

/**
 * One member of a KIP-848 scenario's group: a KafkaConsumer in a thread of the scenario's
 * JVM, or another process (a child JVM, franz-go) that reports what it owns, reads and
 * commits on its standard output. Either records its history in the scenario's ledger.
 */
interface Kip848Member {
    String name();

    /** The partitions the member owned when it last reported (empty once stopped). */
    Set<TopicPartition> assigned();

    /** How many times the member's assignment changed since it started. */
    int assignmentChanges();

    void start() throws Exception;

    /** Leaves the group cleanly (the client's close) and waits for the member to end. */
    void stop() throws Exception;

    /** Throws when the member has failed on its own. */
    void rethrow() throws ScenarioFailed;
}
