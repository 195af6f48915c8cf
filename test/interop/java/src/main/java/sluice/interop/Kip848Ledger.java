package sluice.interop;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.kafka.common.TopicPartition;

/**
 * What the KIP-848 scenarios' producer wrote and what every member read, committed and
 * lost, for the end-of-run checks: no record lost (every produced value read, each at the
 * offset it was written to), and duplicates only after a revocation without commit: every
 * read of a record but the last must be followed, in its reader's own history, by the loss
 * of that partition (revoked, lost, closed or killed) while the reader's last successful
 * commit on it was at most the record's offset. Each member's history is kept in the
 * order the member itself saw it, so the check does not depend on how two members'
 * threads or pipes interleave.
 */
final class Kip848Ledger implements Kip848History {
    /** One entry of a member's history. */
    private record Event(Kind kind, TopicPartition tp, long offset, String value) {
    }

    private enum Kind { READ, COMMIT, LOSS }

    private final Map<String, TopicPartition> producedTo = new ConcurrentHashMap<>();
    private final Map<String, Long> producedAt = new ConcurrentHashMap<>();
    private final Map<String, List<Event>> histories = new ConcurrentHashMap<>();

    void produced(String value, TopicPartition tp, long offset) {
        producedTo.put(value, tp);
        producedAt.put(value, offset);
    }

    int producedCount() {
        return producedTo.size();
    }

    private List<Event> history(String member) {
        return histories.computeIfAbsent(member, m -> new ArrayList<>());
    }

    @Override
    public void read(String member, TopicPartition tp, long offset, String value) {
        List<Event> h = history(member);
        synchronized (h) {
            h.add(new Event(Kind.READ, tp, offset, value));
        }
    }

    @Override
    public void committed(String member, TopicPartition tp, long next) {
        List<Event> h = history(member);
        synchronized (h) {
            h.add(new Event(Kind.COMMIT, tp, next, null));
        }
    }

    @Override
    public void lost(String member, TopicPartition tp) {
        List<Event> h = history(member);
        synchronized (h) {
            h.add(new Event(Kind.LOSS, tp, -1, null));
        }
    }

    int readCount(String member) {
        List<Event> h = history(member);
        synchronized (h) {
            return (int) h.stream().filter(e -> e.kind == Kind.READ).count();
        }
    }

    /** Whether every produced value has been read by some member. */
    boolean allRead() {
        return missing().isEmpty();
    }

    List<String> missing() {
        java.util.Set<String> seen = new java.util.HashSet<>();
        for (List<Event> h : histories.values()) {
            synchronized (h) {
                for (Event e : h) {
                    if (e.kind == Kind.READ) {
                        seen.add(e.value);
                    }
                }
            }
        }
        List<String> out = new ArrayList<>();
        for (String v : producedTo.keySet()) {
            if (!seen.contains(v)) {
                out.add(v);
            }
        }
        return out;
    }

    /**
     * Checks both rules; returns a one-line summary (reads, duplicates and the duplicates'
     * excuses) or throws with the first offending records.
     */
    String check() throws ScenarioFailed {
        List<String> missing = missing();
        if (!missing.isEmpty()) {
            throw new ScenarioFailed(missing.size() + " of " + producedTo.size() + " produced records never read, e.g. "
                + missing.subList(0, Math.min(5, missing.size())));
        }
        List<String> wrong = new ArrayList<>();
        // Per record: how many reads, and how many of them were excused by a later loss of
        // the partition before a commit covering the record.
        Map<String, int[]> reads = new HashMap<>();
        for (Map.Entry<String, List<Event>> m : histories.entrySet()) {
            List<Event> h;
            synchronized (m.getValue()) {
                h = new ArrayList<>(m.getValue());
            }
            for (int i = 0; i < h.size(); i++) {
                Event e = h.get(i);
                if (e.kind != Kind.READ) {
                    continue;
                }
                if (!e.tp.equals(producedTo.get(e.value)) || producedAt.get(e.value) != e.offset) {
                    wrong.add(m.getKey() + " read " + e.value + " at " + e.tp + "@" + e.offset + ", written to "
                        + producedTo.get(e.value) + "@" + producedAt.get(e.value));
                }
                int[] count = reads.computeIfAbsent(e.value, v -> new int[2]);
                count[0]++;
                if (lostUncommitted(h, i)) {
                    count[1]++;
                }
            }
        }
        if (!wrong.isEmpty()) {
            throw new ScenarioFailed(wrong.size() + " records read where they were not written, e.g. "
                + wrong.subList(0, Math.min(5, wrong.size())));
        }
        int duplicates = 0;
        List<String> unexcused = new ArrayList<>();
        for (Map.Entry<String, int[]> r : reads.entrySet()) {
            int[] c = r.getValue();
            duplicates += c[0] - 1;
            // All reads but one must have been given up uncommitted.
            if (c[0] - 1 > c[1]) {
                unexcused.add(r.getKey() + " read " + c[0] + " times, " + c[1] + " of them lost uncommitted");
            }
        }
        if (!unexcused.isEmpty()) {
            java.util.Collections.sort(unexcused);
            throw new ScenarioFailed(unexcused.size() + " records read again although their reader had committed "
                + "them before giving up the partition, e.g. " + unexcused.subList(0, Math.min(5, unexcused.size()))
                + "\n" + describe(unexcused.get(0).split(" ")[0]));
        }
        return producedTo.size() + " records produced, all read; " + duplicates
            + " duplicate reads, each after its reader lost the partition without committing the record";
    }

    /** Whether, after the read at index I, its reader lost the partition with a commit not past it. */
    private static boolean lostUncommitted(List<Event> h, int i) {
        Event read = h.get(i);
        long committed = -1;
        for (int j = 0; j < i; j++) {
            Event e = h.get(j);
            if (e.kind == Kind.COMMIT && e.tp.equals(read.tp)) {
                committed = Math.max(committed, e.offset);
            }
        }
        for (int j = i + 1; j < h.size(); j++) {
            Event e = h.get(j);
            if (!e.tp.equals(read.tp)) {
                continue;
            }
            if (e.kind == Kind.COMMIT) {
                committed = Math.max(committed, e.offset);
            } else if (e.kind == Kind.LOSS) {
                return committed <= read.offset;
            }
        }
        return false;
    }

    /** Every member's history of VALUE's partition, for a failure message. */
    private String describe(String value) {
        TopicPartition tp = producedTo.get(value);
        StringBuilder sb = new StringBuilder("history of " + tp + " (record " + value + " at offset "
            + producedAt.get(value) + "):");
        for (Map.Entry<String, List<Event>> m : histories.entrySet()) {
            synchronized (m.getValue()) {
                for (Event e : m.getValue()) {
                    if (e.tp.equals(tp) && (e.kind != Kind.READ || e.value.equals(value))) {
                        sb.append("\n  ").append(m.getKey()).append(' ').append(e.kind).append(' ').append(e.offset);
                    }
                }
            }
        }
        return sb.toString();
    }
}
