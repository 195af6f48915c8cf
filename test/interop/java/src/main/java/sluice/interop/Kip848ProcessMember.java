package sluice.interop;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.common.TopicPartition;

/**
 * A member running as another process that speaks {@link Kip848MemberScenario}'s line
 * protocol on its standard output (a child JVM, or the franz-go program); its lines go into
 * the ledger in the order the process wrote them. stop() closes its standard input and
 * waits for it to leave and exit; kill() is kill -9. Its standard error goes to LOG, which
 * is removed when the JVM exits (a scenario that fails prints what it needs of it).
 */
final class Kip848ProcessMember implements Kip848Member {
    private final String name;
    private final List<String> command;
    private final Path log;
    private final Kip848Ledger ledger;
    private final AtomicReference<Set<TopicPartition>> assigned = new AtomicReference<>(Set.of());
    private final AtomicInteger changes = new AtomicInteger();
    private final AtomicReference<String> failure = new AtomicReference<>();
    private volatile boolean ending;
    private Process process;
    private Thread reader;

    Kip848ProcessMember(String name, List<String> command, Path log, Kip848Ledger ledger) {
        this.name = name;
        this.command = command;
        this.log = log;
        this.ledger = ledger;
        log.toFile().deleteOnExit();
    }

    /** The command running {@link Kip848MemberScenario} in a new JVM with this JVM's classpath. */
    static List<String> javaMember(String bootstrap, String topic, String group, String name, String instance) {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        return List.of(java, "-Xmx256M", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp",
            System.getProperty("java.class.path"), Main.class.getName(), "--bootstrap", bootstrap, "kip848-member",
            topic, group, name, instance);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Set<TopicPartition> assigned() {
        return assigned.get();
    }

    @Override
    public int assignmentChanges() {
        return changes.get();
    }

    @Override
    public void start() throws IOException {
        process = new ProcessBuilder(command).redirectError(log.toFile()).start();
        reader = new Thread(this::readLines, "reader-" + name);
        reader.start();
    }

    private void readLines() {
        try (BufferedReader r = new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                handle(line);
            }
        } catch (IOException e) {
            failure.compareAndSet(null, "reading its output: " + e);
        }
        if (!ending) {
            failure.compareAndSet(null, "exited on its own; its stderr:\n" + tail(log));
        }
    }

    private void handle(String line) {
        String[] f = line.split(" ", 5);
        switch (f[0]) {
            case "assigned" -> {
                Set<TopicPartition> now = new HashSet<>();
                for (String tp : (f.length > 1 ? f[1] : "").split(",")) {
                    if (!tp.isEmpty()) {
                        int colon = tp.lastIndexOf(':');
                        now.add(new TopicPartition(tp.substring(0, colon), Integer.parseInt(tp.substring(colon + 1))));
                    }
                }
                assigned.set(Set.copyOf(now));
                changes.incrementAndGet();
            }
            case "read" -> ledger.read(name, tp(f), Long.parseLong(f[3]), f[4]);
            case "committed" -> ledger.committed(name, tp(f), Long.parseLong(f[3]));
            case "lost" -> ledger.lost(name, tp(f));
            default -> System.out.println(name + ": " + line);
        }
    }

    /** The last 20 lines of FILE, for a failure message. */
    static String tail(Path file) {
        try {
            List<String> lines = java.nio.file.Files.readAllLines(file, StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
        } catch (IOException e) {
            return "(unreadable: " + e + ")";
        }
    }

    private static TopicPartition tp(String[] f) {
        return new TopicPartition(f[1], Integer.parseInt(f[2]));
    }

    @Override
    public void stop() throws Exception {
        if (process == null || ending) {
            return;
        }
        ending = true;
        process.getOutputStream().close();
        if (!process.waitFor(Kip848Group.STEP_DEADLINE.toSeconds(), TimeUnit.SECONDS)) {
            process.destroyForcibly();
            failure.compareAndSet(null, "did not exit within " + Kip848Group.STEP_DEADLINE + " of its input ending");
        } else if (process.exitValue() != 0) {
            failure.compareAndSet(null, "exited with status " + process.exitValue() + "; its stderr:\n" + tail(log));
        }
        reader.join();
    }

    /** kill -9: the member ends without leaving; everything it owned counts as lost. */
    void kill() throws Exception {
        if (process == null) {
            return;
        }
        ending = true;
        process.destroyForcibly();
        process.waitFor();
        reader.join();
        for (TopicPartition tp : new ArrayList<>(assigned.get())) {
            ledger.lost(name, tp);
        }
    }

    @Override
    public void rethrow() throws ScenarioFailed {
        if (failure.get() != null) {
            throw new ScenarioFailed("member " + name + ": " + failure.get());
        }
    }
}
