package controller

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
)

// testPolicy stands in for internal/config: "bad.*" keys and the value
// "invalid" are refused; cleanup.policy is a list defaulting to "delete".
type testPolicy struct{}

func (testPolicy) Validate(_ metadata.ConfigResource, cfg map[string]string) error {
	for k, v := range cfg {
		if strings.HasPrefix(k, "bad.") || v == "invalid" {
			return fmt.Errorf("invalid value %s for configuration %s", v, k)
		}
	}
	return nil
}
func (testPolicy) IsList(_ metadata.ConfigResourceType, name string) bool {
	return name == "cleanup.policy"
}
func (testPolicy) Default(_ metadata.ConfigResourceType, name string) string {
	if name == "cleanup.policy" {
		return "delete"
	}
	return ""
}

func testID(n int) kafka.UUID { return kafka.UUID{15: byte(n)} }

func fmtRecord(r metadata.Record) string {
	switch x := r.(type) {
	case *metadata.ConfigRecord:
		v := "<delete>"
		if x.Value != nil {
			v = *x.Value
		}
		return fmt.Sprintf("config %s %q %s=%s", x.ResourceType, x.ResourceName, x.Name, v)
	case *metadata.RegisterBrokerRecord:
		rack := "<none>"
		if x.Rack != nil {
			rack = *x.Rack
		}
		return fmt.Sprintf("register-broker id=%d epoch=%d fenced=%t rack=%s endpoints=%v", x.BrokerID, x.BrokerEpoch, x.Fenced, rack, x.Endpoints)
	case *metadata.TopicRecord:
		return fmt.Sprintf("topic %s id=%s", x.Name, x.TopicID)
	case *metadata.PartitionRecord:
		return fmt.Sprintf("partition p=%d replicas=%v isr=%v leader=%d", x.Partition, x.Replicas, x.ISR, x.Leader)
	default:
		if s, ok := fmtSecurityRecord(r); ok {
			return s
		}
		return fmt.Sprintf("%T %+v", r, r)[len("*metadata."):]
	}
}

func errName(code int16) string {
	if code == 0 {
		return "ok"
	}
	var ke *kerr.Error
	if errors.As(kerr.ErrorForCode(code), &ke) {
		return ke.Message
	}
	return strconv.Itoa(int(code))
}

func msgOf(s *string) string {
	if s == nil {
		return ""
	}
	return ": " + *s
}

func args(line string) (string, map[string]string) {
	f := strings.Fields(line)
	kv := map[string]string{}
	for _, x := range f[1:] {
		k, v, _ := strings.Cut(x, "=")
		kv[k] = v
	}
	return f[0], kv
}

func atoi(s string, def int) int {
	if s == "" {
		return def
	}
	n, _ := strconv.Atoi(s)
	return n
}

func int32s(s string) []int32 {
	var out []int32
	for _, f := range strings.Split(s, ",") {
		out = append(out, int32(atoi(f, 0)))
	}
	return out
}

// TestController runs the golden files: each command computes records and a
// response, prints both, and applies the records to the image as a commit would.
func TestController(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		nextID := 0
		c := New(Options{NumPartitions: 2, DefaultReplicationFactor: 1, Configs: testPolicy{},
			NewTopicID: func() (kafka.UUID, error) { nextID++; return testID(nextID), nil }})
		im := metadata.EmptyImage()
		offset := int64(0)
		apply := func(recs []metadata.Record) {
			if len(recs) == 0 {
				return
			}
			d := metadata.NewDelta(im)
			for _, r := range recs {
				if err := d.Replay(offset, 1, r); err != nil {
					t.Fatalf("replay of controller output failed: %v", err)
				}
			}
			offset++
			im = d.Apply()
		}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			var recs []metadata.Record
			var out strings.Builder
			kv := map[string]string{}
			for _, a := range d.CmdArgs {
				kv[a.Key] = strings.Join(a.Vals, ",")
			}
			switch d.Cmd {
			case "bootstrap":
				recs = metadata.BootstrapRecords(kv["cluster"], int16(atoi(kv["metadata-version"], 1)))
			case "register-broker":
				req := kmsg.NewPtrBrokerRegistrationRequest()
				req.BrokerID, req.ClusterID, req.IncarnationID = int32(atoi(kv["id"], 0)), kv["cluster"], testID(atoi(kv["incarnation"], 0))
				req.Listeners = []kmsg.BrokerRegistrationRequestListener{{Name: "PLAINTEXT", Host: "localhost", Port: uint16(9090 + atoi(kv["id"], 0))}}
				var resp *kmsg.BrokerRegistrationResponse
				recs, resp = c.RegisterBroker(im, req)
				fmt.Fprintf(&out, "response: %s epoch=%d\n", errName(resp.ErrorCode), resp.BrokerEpoch)
			case "unfence":
				id := int32(atoi(kv["id"], 0))
				b, _ := im.Broker(id)
				var err error
				if recs, err = c.UnfenceBroker(im, id, b.Epoch); err != nil {
					fmt.Fprintf(&out, "error: %v\n", err)
				}
			case "create-topics":
				req := kmsg.NewPtrCreateTopicsRequest()
				req.ValidateOnly = d.HasArg("validate-only")
				for _, line := range strings.Split(d.Input, "\n") {
					name, tk := args(line)
					if name == `""` {
						name = ""
					}
					rt := kmsg.NewCreateTopicsRequestTopic()
					rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, int32(atoi(tk["partitions"], -1)), int16(atoi(tk["rf"], -1))
					if a, ok := tk["assign"]; ok {
						for p, reps := range strings.Split(a, ";") {
							ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
							ra.Partition, ra.Replicas = int32(p), int32s(reps)
							rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
						}
					}
					if cfg, ok := tk["config"]; ok {
						k, v, _ := strings.Cut(cfg, ":")
						rt.Configs = append(rt.Configs, kmsg.CreateTopicsRequestTopicConfig{Name: k, Value: &v})
					}
					req.Topics = append(req.Topics, rt)
				}
				var resp *kmsg.CreateTopicsResponse
				recs, resp = c.CreateTopics(im, req)
				for _, rt := range resp.Topics {
					fmt.Fprintf(&out, "response: %q %s%s", rt.Topic, errName(rt.ErrorCode), msgOf(rt.ErrorMessage))
					if rt.ErrorCode == 0 {
						fmt.Fprintf(&out, " id=%s partitions=%d rf=%d", kafka.UUID(rt.TopicID), rt.NumPartitions, rt.ReplicationFactor)
					}
					out.WriteByte('\n')
				}
			case "delete-topics":
				req := kmsg.NewPtrDeleteTopicsRequest()
				for _, line := range strings.Split(d.Input, "\n") {
					_, tk := args("x " + line)
					dt := kmsg.NewDeleteTopicsRequestTopic()
					if n, ok := tk["name"]; ok {
						dt.Topic = &n
					} else {
						dt.TopicID = testID(atoi(tk["id"], 0))
					}
					req.Topics = append(req.Topics, dt)
				}
				var resp *kmsg.DeleteTopicsResponse
				recs, resp = c.DeleteTopics(im, req)
				for _, rt := range resp.Topics {
					name := "<nil>"
					if rt.Topic != nil {
						name = *rt.Topic
					}
					fmt.Fprintf(&out, "response: %s id=%s %s%s\n", name, kafka.UUID(rt.TopicID), errName(rt.ErrorCode), msgOf(rt.ErrorMessage))
				}
			case "create-partitions":
				req := kmsg.NewPtrCreatePartitionsRequest()
				req.ValidateOnly = d.HasArg("validate-only")
				for _, line := range strings.Split(d.Input, "\n") {
					name, tk := args(line)
					rt := kmsg.NewCreatePartitionsRequestTopic()
					rt.Topic, rt.Count = name, int32(atoi(tk["count"], 0))
					if a, ok := tk["assign"]; ok {
						for _, reps := range strings.Split(a, ";") {
							rt.Assignment = append(rt.Assignment, kmsg.CreatePartitionsRequestTopicAssignment{Replicas: int32s(reps)})
						}
					}
					req.Topics = append(req.Topics, rt)
				}
				var resp *kmsg.CreatePartitionsResponse
				recs, resp = c.CreatePartitions(im, req)
				for _, rt := range resp.Topics {
					fmt.Fprintf(&out, "response: %s %s%s\n", rt.Topic, errName(rt.ErrorCode), msgOf(rt.ErrorMessage))
				}
			case "incremental-alter-configs", "alter-configs":
				// Input lines: "<topic|broker> <name> <op> key[=value]"; op is ignored by alter-configs.
				inc := kmsg.NewPtrIncrementalAlterConfigsRequest()
				alt := kmsg.NewPtrAlterConfigsRequest()
				for _, line := range strings.Split(d.Input, "\n") {
					f := strings.Fields(line)
					typ := kmsg.ConfigResourceTypeTopic
					if f[0] == "broker" {
						typ = kmsg.ConfigResourceTypeBroker
					}
					name := strings.Trim(f[1], `"`)
					op, _ := kmsg.ParseIncrementalAlterConfigOp(strings.ToUpper(f[2]))
					k, v, hasV := strings.Cut(f[3], "=")
					var vp *string
					if hasV {
						vp = &v
					}
					if n := len(inc.Resources); n == 0 || inc.Resources[n-1].ResourceName != name || inc.Resources[n-1].ResourceType != typ {
						inc.Resources = append(inc.Resources, kmsg.IncrementalAlterConfigsRequestResource{ResourceType: typ, ResourceName: name})
						alt.Resources = append(alt.Resources, kmsg.AlterConfigsRequestResource{ResourceType: typ, ResourceName: name})
					}
					ir := &inc.Resources[len(inc.Resources)-1]
					ir.Configs = append(ir.Configs, kmsg.IncrementalAlterConfigsRequestResourceConfig{Name: k, Op: op, Value: vp})
					ar := &alt.Resources[len(alt.Resources)-1]
					ar.Configs = append(ar.Configs, kmsg.AlterConfigsRequestResourceConfig{Name: k, Value: vp})
				}
				if d.Cmd == "alter-configs" {
					var resp *kmsg.AlterConfigsResponse
					recs, resp = c.AlterConfigs(im, alt)
					for _, r := range resp.Resources {
						fmt.Fprintf(&out, "response: %s %q %s%s\n", r.ResourceType, r.ResourceName, errName(r.ErrorCode), msgOf(r.ErrorMessage))
					}
				} else {
					var resp *kmsg.IncrementalAlterConfigsResponse
					recs, resp = c.IncrementalAlterConfigs(im, inc)
					for _, r := range resp.Resources {
						fmt.Fprintf(&out, "response: %s %q %s%s\n", r.ResourceType, r.ResourceName, errName(r.ErrorCode), msgOf(r.ErrorMessage))
					}
				}
			case "allocate-producer-ids":
				req := kmsg.NewPtrAllocateProducerIDsRequest()
				req.BrokerID = int32(atoi(kv["broker"], 0))
				if e, ok := kv["epoch"]; ok {
					req.BrokerEpoch = int64(atoi(e, 0))
				} else if b, ok := im.Broker(req.BrokerID); ok {
					req.BrokerEpoch = b.Epoch
				}
				var resp *kmsg.AllocateProducerIDsResponse
				recs, resp = c.AllocateProducerIDs(im, req)
				fmt.Fprintf(&out, "response: %s start=%d len=%d\n", errName(resp.ErrorCode), resp.ProducerIDStart, resp.ProducerIDLen)
			case "image":
				return im.String()
			default:
				var ok bool
				if recs, ok = securityCommand(c, im, d, &out); !ok {
					t.Fatalf("unknown command %s", d.Cmd)
				}
			}
			for _, r := range recs {
				fmt.Fprintf(&out, "record: %s\n", fmtRecord(r))
			}
			apply(recs)
			return out.String()
		})
	})
}
