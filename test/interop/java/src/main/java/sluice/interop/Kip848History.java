package sluice.interop;

import java.util.Set;

import org.apache.kafka.common.TopicPartition;

/** Where a member notes what it reads, commits, loses and owns. */
interface Kip848History {
    void read(String member, TopicPartition tp, long offset, String value);

    /** A successful commit of NEXT (the offset of the next record to read) on TP. */
    void committed(String member, TopicPartition tp, long next);

    void lost(String member, TopicPartition tp);

    default void assigned(String member, Set<TopicPartition> now) {
    }
}
