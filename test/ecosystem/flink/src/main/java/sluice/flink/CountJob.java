package sluice.flink;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.serialization.SimpleStringSchema;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.connector.kafka.sink.TransactionNamingStrategy;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * The Flink job of flink_kafka_test.sh, in Flink's local mini cluster (this JVM):
 * KafkaSource of INPUT (values "KEY SEQ") -> keyBy KEY -> a running count per key in keyed
 * state -> KafkaSink to OUTPUT (key KEY, value "KEY COUNT SEQ RUN") with
 * DeliveryGuarantee.EXACTLY_ONCE, so a record reaches a read_committed reader only in the
 * transaction committed after the checkpoint that holds its count. Checkpoints every second
 * into CHECKPOINT_DIR/JOB_ID/chk-N, retained after the job ends (a kill -9 leaves them),
 * so a later run restores from one with RESTORE_PATH (execution.state-recovery.path).
 *
 * usage: CountJob BOOTSTRAP INPUT OUTPUT CHECKPOINT_DIR TXN_PREFIX RUN [RESTORE_PATH]
 *
 * The sink's TransactionNamingStrategy is the environment's FLINK_TXN_NAMING (DEFAULT,
 * INCREMENTING: ids PREFIX-SUBTASK-CHECKPOINT, the ones after the checkpoint aborted on
 * restore by InitProducerId; POOLING: ids reused, open ones found through ListTransactions
 * and DescribeTransactions and aborted on restore).
 *
 * Prints "job ID" once submitted, "checkpoint N complete" as checkpoints complete (subtask
 * 0 of the count), "first KEY COUNT" for the first record of each key that a run sees
 * after a restore (the count restored from the checkpoint plus one), and the job's
 * final status if it ends.
 *
 * When the file CHECKPOINT_DIR/halt exists, the next checkpoint's count task, once it has
 * taken its snapshot, blocks on its next record, so it cannot hear that the checkpoint
 * completed and its sink cannot commit that checkpoint's transactions; the source's task
 * hears it and halts the JVM (as a kill -9 does: no shutdown hook, no flush). The job
 * restored from that checkpoint must commit those transactions (resuming each by its
 * producer id and epoch) or lose their records.
 */
public final class CountJob {
  public static void main(String[] args) throws Exception {
    if (args.length < 6 || args.length > 7) {
      System.err.println(
          "usage: CountJob BOOTSTRAP INPUT OUTPUT CHECKPOINT_DIR TXN_PREFIX RUN [RESTORE_PATH]");
      System.exit(2);
    }
    String bootstrap = args[0], input = args[1], output = args[2], checkpoints = args[3];
    String txnPrefix = args[4], run = args[5];

    Map<String, String> settings = new HashMap<>();
    settings.put("execution.checkpointing.interval", "1 s");
    settings.put("execution.checkpointing.mode", "EXACTLY_ONCE");
    settings.put("execution.checkpointing.storage", "filesystem");
    settings.put("execution.checkpointing.dir", "file://" + checkpoints);
    settings.put("execution.checkpointing.externalized-checkpoint-retention", "RETAIN_ON_CANCELLATION");
    settings.put("execution.checkpointing.num-retained", "3");
    settings.put("state.backend.type", "hashmap");
    // A failing job must fail the scenario, not retry forever (the default with
    // checkpointing): a few restarts for a transient error, then the job ends FAILED.
    settings.put("restart-strategy.type", "fixed-delay");
    settings.put("restart-strategy.fixed-delay.attempts", "2");
    settings.put("restart-strategy.fixed-delay.delay", "1 s");
    if (args.length == 7) {
      settings.put("execution.state-recovery.path", args[6]);
    }
    StreamExecutionEnvironment env =
        StreamExecutionEnvironment.getExecutionEnvironment(Configuration.fromMap(settings));
    env.setParallelism(2);
    // Records leave a task within 10 ms (not the default 100): after a barrier the next
    // record reaches the count soon, which the halt above waits for.
    env.setBufferTimeout(10);

    KafkaSource<String> source = KafkaSource.<String>builder()
        .setBootstrapServers(bootstrap)
        .setTopics(input)
        .setGroupId("flink-count")
        // The first run reads from the start; a restored run takes the offsets in its
        // checkpoint and never looks at this.
        .setStartingOffsets(OffsetsInitializer.earliest())
        .setValueOnlyDeserializer(new SimpleStringSchema())
        .build();

    // DEFAULT is an alias field of the enum (INCREMENTING), not a constant valueOf knows.
    String namingName = System.getenv().getOrDefault("FLINK_TXN_NAMING", "DEFAULT");
    TransactionNamingStrategy naming = namingName.equals("DEFAULT")
        ? TransactionNamingStrategy.DEFAULT : TransactionNamingStrategy.valueOf(namingName);
    System.out.println("naming " + naming);
    KafkaSink<String> sink = KafkaSink.<String>builder()
        .setBootstrapServers(bootstrap)
        .setRecordSerializer(KafkaRecordSerializationSchema.<String>builder()
            .setTopic(output)
            .setKeySerializationSchema(
                (String v) -> v.substring(0, v.indexOf(' ')).getBytes(StandardCharsets.UTF_8))
            .setValueSerializationSchema(new SimpleStringSchema())
            .build())
        .setDeliveryGuarantee(DeliveryGuarantee.EXACTLY_ONCE)
        .setTransactionalIdPrefix(txnPrefix)
        .setTransactionNamingStrategy(naming)
        // Below the broker's transaction.max.timeout.ms (15 min) and well above the
        // scenario's deadlines: a transaction of a killed run that nobody aborts holds the
        // read_committed reader back long enough to fail the check.
        .setProperty("transaction.timeout.ms", "300000")
        .build();

    env.fromSource(source, WatermarkStrategy.noWatermarks(), "kafka-input")
        .map(new HaltAfterCheckpoint())
        .name("halt-after-checkpoint")
        .keyBy(v -> v.substring(0, v.indexOf(' ')))
        .process(new RunningCount(run, checkpoints + "/halt"))
        .name("running-count")
        .sinkTo(sink)
        .name("kafka-output");

    JobClient job = env.executeAsync("sluice-flink-count-" + run);
    System.out.println("job " + job.getJobID());
    System.out.flush();
    JobStatus status = job.getJobExecutionResult()
        .handle((r, e) -> {
          if (e != null) {
            e.printStackTrace();
            return JobStatus.FAILED;
          }
          return JobStatus.FINISHED;
        })
        .get();
    System.out.println("job ended " + status);
    System.exit(status == JobStatus.FINISHED ? 0 : 1);
  }

  /** The checkpoint after which the count blocks (and the JVM halts); -1: not asked. */
  static volatile long blockedAfter = -1;

  /** Passes records through; halts the JVM when the checkpoint the count blocked after completes. */
  static final class HaltAfterCheckpoint implements MapFunction<String, String>, CheckpointListener {
    @Override
    public String map(String value) {
      return value;
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
      long blocked = blockedAfter;
      if (blocked > 0 && checkpointId >= blocked) {
        System.out.println("halt after checkpoint " + checkpointId);
        System.out.flush();
        Runtime.getRuntime().halt(137);
      }
    }
  }

  /** The running count per key, in keyed ValueState (what a checkpoint carries). */
  static final class RunningCount extends KeyedProcessFunction<String, String, String>
      implements CheckpointListener, CheckpointedFunction {
    private final String run;
    private final String trigger;
    private boolean block;
    private transient ValueState<Long> count;
    private transient Map<String, Boolean> seen;

    RunningCount(String run, String trigger) {
      this.run = run;
      this.trigger = trigger;
    }

    @Override
    public void initializeState(FunctionInitializationContext ctx) {}

    @Override
    public void snapshotState(FunctionSnapshotContext ctx) {
      if (Files.exists(Path.of(trigger))) {
        blockedAfter = ctx.getCheckpointId();
        block = true;
      }
    }

    @Override
    public void open(OpenContext ctx) {
      count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Long.class));
      seen = new HashMap<>();
    }

    @Override
    public void processElement(String value, Context ctx, Collector<String> out) throws Exception {
      while (block) {
        Thread.sleep(1000); // until the halt
      }
      String[] parts = value.split(" ");
      Long c = count.value();
      long next = (c == null ? 0 : c) + 1;
      count.update(next);
      if (seen.put(parts[0], Boolean.TRUE) == null) {
        System.out.println("first " + parts[0] + " " + next);
      }
      out.collect(parts[0] + " " + next + " " + parts[1] + " " + run);
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
      if (getRuntimeContext().getTaskInfo().getIndexOfThisSubtask() == 0) {
        System.out.println("checkpoint " + checkpointId + " complete");
      }
    }
  }
}
