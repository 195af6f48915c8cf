package controller

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
)

// dirID turns the goldens' small numbers into log dir ids (not reserved).
func dirID(s string) kafka.UUID {
	n, _ := strconv.Atoi(s)
	return kafka.UUID{0: 0xd1, 15: byte(n)}
}

func dirList(s string) [][16]byte {
	var out [][16]byte
	for _, f := range strings.Split(s, ",") {
		if f != "" {
			out = append(out, dirID(f))
		}
	}
	return out
}

// dirName prints a dir id as the goldens write it.
func dirName(id kafka.UUID) string {
	switch {
	case id == metadata.DirUnassigned:
		return "unassigned"
	case id == metadata.DirLost:
		return "lost"
	case id[0] == 0xd1:
		return strconv.Itoa(int(id[15]))
	}
	return id.String()
}

func dirNames(ids []kafka.UUID) string {
	if ids == nil {
		return "none"
	}
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = dirName(id)
	}
	return "[" + strings.Join(s, " ") + "]"
}

func printDirRecord(out *strings.Builder, im *metadata.Image, r metadata.Record) {
	switch x := r.(type) {
	case *metadata.PartitionChangeRecord:
		t, _ := im.TopicByID(x.TopicID)
		fmt.Fprintf(out, "record: partition-change %s-%d leader=%d", t.Name, x.Partition, x.Leader)
		if x.ISR != nil {
			fmt.Fprintf(out, " isr=%v", x.ISR)
		}
		if x.Directories != nil {
			fmt.Fprintf(out, " dirs=%s", dirNames(x.Directories))
		}
	case *metadata.BrokerRegistrationChangeRecord:
		fmt.Fprintf(out, "record: broker-change %d log-dirs=%s", x.BrokerID, dirNames(x.LogDirs))
	case *metadata.RegisterBrokerRecord:
		fmt.Fprintf(out, "record: register-broker %d log-dirs=%s", x.BrokerID, dirNames(x.LogDirs))
	default:
		fmt.Fprintf(out, "record: %T", r)
	}
	out.WriteByte('\n')
}

// TestLogDirs runs logdirs_testdata: brokers register dirs, assign replicas
// to them and report dirs offline; each command prints the controller's
// records and response, applies the records, and prints the partitions.
func TestLogDirs(t *testing.T) {
	datadriven.Walk(t, "logdirs_testdata", func(t *testing.T, path string) {
		c := New(Options{})
		im, off := metadata.EmptyImage(), int64(0)
		apply := func(recs []metadata.Record) {
			im = applyRecords(t, im, off, recs)
			off += int64(len(recs))
		}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			kv := map[string]string{}
			for _, a := range d.CmdArgs {
				kv[a.Key] = strings.Join(a.Vals, ",")
			}
			var out strings.Builder
			var recs []metadata.Record
			switch d.Cmd {
			case "setup":
				recs = logDirsSetup(kv["assignment"] != "off")
			case "register":
				req := kmsg.NewPtrBrokerRegistrationRequest()
				req.BrokerID, req.ClusterID = int32(atoi(kv["id"], 0)), im.ClusterID()
				req.IncarnationID, req.LogDirs = testID(atoi(kv["id"], 0)), dirList(kv["dirs"])
				var resp *kmsg.BrokerRegistrationResponse
				recs, resp = c.RegisterBroker(im, req)
				fmt.Fprintf(&out, "response: %s\n", errName(resp.ErrorCode))
			case "assign":
				req := kmsg.NewPtrAssignReplicasToDirsRequest()
				req.BrokerID = int32(atoi(kv["broker"], 0))
				b, _ := im.Broker(req.BrokerID)
				req.BrokerEpoch = b.Epoch
				for _, line := range strings.Split(d.Input, "\n") {
					dir, parts, _ := strings.Cut(line, " ")
					rd := kmsg.NewAssignReplicasToDirsRequestDirectory()
					rd.ID = dirID(dir)
					for _, tp := range strings.Fields(parts) {
						topic, p, _ := strings.Cut(tp, "-")
						rt := kmsg.NewAssignReplicasToDirsRequestDirectoryTopic()
						rt.TopicID = testID(atoi(topic, 0))
						rp := kmsg.NewAssignReplicasToDirsRequestDirectoryTopicPartition()
						rp.Partition = int32(atoi(p, 0))
						rt.Partitions = append(rt.Partitions, rp)
						rd.Topics = append(rd.Topics, rt)
					}
					req.Directories = append(req.Directories, rd)
				}
				var resp *kmsg.AssignReplicasToDirsResponse
				var err error
				recs, resp, err = c.AssignReplicasToDirs(im, req)
				if err != nil {
					fmt.Fprintf(&out, "error: %v\n", err)
					break
				}
				for _, rd := range resp.Directories {
					for _, rt := range rd.Topics {
						for _, rp := range rt.Partitions {
							fmt.Fprintf(&out, "response: dir %s topic %d-%d %s\n", dirName(rd.ID), rt.TopicID[15], rp.Partition, errName(rp.ErrorCode))
						}
					}
				}
			case "heartbeat":
				req := kmsg.NewPtrBrokerHeartbeatRequest()
				req.BrokerID = int32(atoi(kv["broker"], 0))
				b, _ := im.Broker(req.BrokerID)
				req.BrokerEpoch, req.CurrentMetadataOffset, req.OfflineLogDirs = b.Epoch, off, dirList(kv["offline"])
				var resp *kmsg.BrokerHeartbeatResponse
				recs, resp = c.BrokerHeartbeat(im, req)
				fmt.Fprintf(&out, "response: %s fenced=%t\n", errName(resp.ErrorCode), resp.IsFenced)
			default:
				return "unknown command " + d.Cmd
			}
			for _, r := range recs {
				printDirRecord(&out, im, r)
			}
			apply(recs)
			writeDirState(&out, im)
			return out.String()
		})
	})
}

// logDirsSetup: brokers 1-3 registered and unfenced with dirs N1 and N2
// (11, 12, 21, ...); topic 1 ("a", 2 partitions) and topic 2 ("b", 1) on
// replicas 1,2,3, partition a-0 and b-0 led by 1, a-1 by 2.
func logDirsSetup(assignment bool) []metadata.Record {
	recs := []metadata.Record{&metadata.ClusterIDRecord{ClusterID: "c"},
		&metadata.FeatureLevelRecord{Name: metadata.MetadataVersionFeature, Level: 33}}
	if assignment {
		recs = append(recs, &metadata.FeatureLevelRecord{Name: metadata.DirectoryAssignmentFeature, Level: 1})
	}
	for id := int32(1); id <= 3; id++ {
		r := &metadata.RegisterBrokerRecord{BrokerID: id, IncarnationID: testID(int(id)), BrokerEpoch: int64(id), Fenced: false}
		if assignment {
			r.LogDirs = []kafka.UUID{dirID(strconv.Itoa(int(id)*10 + 1)), dirID(strconv.Itoa(int(id)*10 + 2))}
		}
		recs = append(recs, r)
	}
	recs = append(recs,
		&metadata.TopicRecord{Name: "a", TopicID: testID(1)},
		&metadata.PartitionRecord{TopicID: testID(1), Partition: 0, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}, Leader: 1},
		&metadata.PartitionRecord{TopicID: testID(1), Partition: 1, Replicas: []int32{2, 1, 3}, ISR: []int32{2, 1, 3}, Leader: 2},
		&metadata.TopicRecord{Name: "b", TopicID: testID(2)},
		&metadata.PartitionRecord{TopicID: testID(2), Partition: 0, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}, Leader: 1})
	return recs
}

func writeDirState(out *strings.Builder, im *metadata.Image) {
	for _, id := range im.BrokerIDs() {
		b, _ := im.Broker(id)
		fmt.Fprintf(out, "broker %d fenced=%t log-dirs=%s\n", id, b.Fenced, dirNames(b.LogDirs))
	}
	for _, name := range im.TopicNames() {
		tp, _ := im.Topic(name)
		for _, p := range tp.PartitionIDs() {
			st := tp.Partitions[p]
			fmt.Fprintf(out, "%s-%d replicas=%v isr=%v leader=%d dirs=%s\n", name, p, st.Replicas, st.ISR, st.Leader, dirNames(st.Directories))
		}
	}
}
