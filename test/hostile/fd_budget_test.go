package hostile

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/testbin"
	"github.com/sluice-io/sluice/internal/testutil"
)

// openFileCount counts the process's open file descriptors.
func openFileCount(t *testing.T, pid int) int {
	t.Helper()
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

// TestIdlePartitionsHoldOneFileEach creates 1,000 partitions and counts
// the server's open file descriptors before and after: an idle partition
// holds one, its active segment's .log, as Kafka's (index files are opened
// per use); it held three.
func TestIdlePartitionsHoldOneFileEach(t *testing.T) {
	const partitions = 1000
	n := startDiskNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	adm := kadm.NewClient(n.client())
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "warmup"); err != nil {
		t.Fatal(err)
	}
	waitPartitionLogs(t, n.cfg.DataDir, "warmup", 1)
	before := openFileCount(t, n.srv.Pid())
	if _, err := adm.CreateTopic(ctx, partitions, 1, nil, "idle"); err != nil {
		t.Fatal(err)
	}
	waitPartitionLogs(t, n.cfg.DataDir, "idle", partitions)
	after := openFileCount(t, n.srv.Pid())
	t.Logf("open file descriptors: %d before, %d after %d idle partitions (%.2f each)",
		before, after, partitions, float64(after-before)/partitions)
	if after-before > partitions+partitions/20 {
		t.Fatalf("%d partitions took %d file descriptors, want about one each", partitions, after-before)
	}
}

// waitPartitionLogs waits until count partitions of topic have their log
// open: partition.metadata is written once the log is.
func waitPartitionLogs(t *testing.T, dataDir, topic string, count int) {
	t.Helper()
	testutil.Eventually(t, time.Minute, func() bool {
		files, _ := filepath.Glob(filepath.Join(dataDir, topic+"-*", "partition.metadata"))
		return len(files) == count
	}, "the %d partition logs of %s were not created", count, topic)
}

// TestCreateTopicsPastFileLimitRefused runs a server whose open file limit
// is 1,024 (room for 768 partitions, 256 kept for connections): one
// CreateTopics of 9,999 partitions, which took the node's listener down
// for good, is refused with POLICY_VIOLATION naming the count and the
// limit, and creates nothing; a topic within the limit is created and
// served, and the node keeps accepting clients.
func TestCreateTopicsPastFileLimitRefused(t *testing.T) {
	srv := testbin.StartServer(t, binaryPath, testbin.ServerConfig{DataDir: t.TempDir(),
		Wrap: []string{"prlimit", "--nofile=1024", "--"}})
	n := &diskNode{t: t, srv: srv}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := n.client()
	adm := kadm.NewClient(cl)
	res, err := adm.CreateTopic(ctx, 9999, 1, nil, "toomany")
	if !errors.Is(err, kerr.PolicyViolation) && !errors.Is(res.Err, kerr.PolicyViolation) {
		t.Fatalf("9,999 partitions under 1,024 files: %v %+v, want POLICY_VIOLATION", err, res)
	}
	if msg := res.ErrMessage; !strings.Contains(msg, "place 9999 partitions on broker 1") || !strings.Contains(msg, "limit of 768") {
		t.Fatalf("refusal message %q does not name the count and the limit", msg)
	}
	if topics, err := adm.ListTopics(ctx, "toomany"); err != nil || topics.Has("toomany") {
		t.Fatalf("the refused topic exists: %v %v", topics, err)
	}
	if _, err := adm.CreateTopic(ctx, 100, 1, nil, "fits"); err != nil {
		t.Fatalf("100 partitions under 1,024 files: %v", err)
	}
	id := lookupTopicID(t, ctx, cl, "fits")
	if code, msg := producePartition0(t, ctx, cl, "fits", id); code != 0 {
		t.Fatalf("produce: %s %s", kerr.ErrorForCode(code), msg)
	}
	if code, data := fetchPartition0(t, ctx, cl, "fits", id, 0); code != 0 || recordsIn(t, data) != 1 {
		t.Fatalf("fetch: %s, %d records", kerr.ErrorForCode(code), recordsIn(t, data))
	}
	if strings.Contains(srv.Logs(), "too many open files") {
		t.Fatal("the server ran out of file descriptors")
	}
}
