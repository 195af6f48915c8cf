package api_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/records/recordstest"
	"github.com/sluice-io/sluice/internal/testbin"
	"github.com/sluice-io/sluice/internal/testutil"
)

// TestCurrentLeaderAcrossACluster checks KIP-951 end to end, through the
// real binary's wiring: on a 3-node cluster, a Produce (v12) sent to a
// broker that does not lead the partition and a Fetch (v17) sent to a broker
// that is not a replica both answer NOT_LEADER_OR_FOLLOWER naming the
// leader, its epoch and its advertised endpoint.
func TestCurrentLeaderAcrossACluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-node cluster of sluice processes")
	}
	addrs := startThreeNodes(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	// Replication factor 2, so one broker hosts no replica at all.
	const topic = "kip951"
	testutil.EventuallyNoError(t, untilDone(ctx), func() error {
		resp, err := adm.CreateTopic(ctx, 1, 2, nil, topic)
		if err != nil {
			return err
		}
		if resp.Err != nil && !errors.Is(resp.Err, kerr.TopicAlreadyExists) {
			return resp.Err
		}
		return nil
	}, "create %s", topic)
	var part kadm.PartitionDetail
	testutil.EventuallyNoError(t, untilDone(ctx), func() error {
		md, err := adm.Metadata(ctx, topic)
		if err != nil {
			return err
		}
		p, ok := md.Topics[topic].Partitions[0]
		if !ok || p.Leader < 1 || len(p.ISR) != 2 {
			return fmt.Errorf("partition 0: %+v", p)
		}
		part = p
		return nil
	}, "%s gets a leader and a whole ISR", topic)
	leaderAddr := addrs[part.Leader-1]
	var follower, outsider int32
	for id := int32(1); id <= 3; id++ {
		switch {
		case id == part.Leader:
		case id == part.Replicas[0] || id == part.Replicas[1]:
			follower = id
		default:
			outsider = id
		}
	}

	// Each broker learns the metadata on its own: ask until it answers.
	produce := kmsg.NewPtrProduceRequest()
	produce.SetVersion(12)
	produce.Acks, produce.TimeoutMillis = -1, 5000
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = topic
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Records = recordstest.Batch(t, recordstest.Values(time.Now().UnixMilli(), "v"))
	pt.Partitions = append(pt.Partitions, pp)
	produce.Topics = append(produce.Topics, pt)
	for _, id := range []int32{follower, outsider} {
		awaitAnswer(ctx, t, addrs[id-1], produce, func(r kmsg.Response) string {
			resp := r.(*kmsg.ProduceResponse)
			p := resp.Topics[0].Partitions[0]
			if p.ErrorCode != kerr.NotLeaderForPartition.Code {
				return fmt.Sprintf("error %v", kerr.ErrorForCode(p.ErrorCode))
			}
			return checkLeader(p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch, part, leaderAddr,
				len(resp.Brokers), func(i int) (int32, string, int32) {
					return resp.Brokers[i].NodeID, resp.Brokers[i].Host, resp.Brokers[i].Port
				})
		})
	}

	fetch := kmsg.NewPtrFetchRequest()
	fetch.SetVersion(17)
	fetch.ReplicaID, fetch.ReplicaState.ID = -1, -1
	fetch.MaxBytes, fetch.SessionEpoch = 1<<20, -1
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	ft := kmsg.NewFetchRequestTopic()
	ft.TopicID = md.Topics[topic].ID
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.CurrentLeaderEpoch, fp.LastFetchedEpoch, fp.PartitionMaxBytes = -1, -1, 1<<20
	ft.Partitions = append(ft.Partitions, fp)
	fetch.Topics = append(fetch.Topics, ft)
	awaitAnswer(ctx, t, addrs[outsider-1], fetch, func(r kmsg.Response) string {
		resp := r.(*kmsg.FetchResponse)
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			return fmt.Sprintf("answer shape %+v", resp)
		}
		p := resp.Topics[0].Partitions[0]
		if p.ErrorCode != kerr.NotLeaderForPartition.Code {
			return fmt.Sprintf("error %v", kerr.ErrorForCode(p.ErrorCode))
		}
		return checkLeader(p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch, part, leaderAddr,
			len(resp.Brokers), func(i int) (int32, string, int32) {
				return resp.Brokers[i].NodeID, resp.Brokers[i].Host, resp.Brokers[i].Port
			})
	})
}

// checkLeader compares a KIP-951 answer with the partition's metadata: ""
// when it names the leader, its epoch and its endpoint, else what differs.
func checkLeader(id, epoch int32, part kadm.PartitionDetail, leaderAddr string, n int, endpoint func(int) (int32, string, int32)) string {
	if id != part.Leader || epoch != part.LeaderEpoch {
		return fmt.Sprintf("current leader %d at epoch %d, want %d at epoch %d", id, epoch, part.Leader, part.LeaderEpoch)
	}
	if n != 1 {
		return fmt.Sprintf("%d node endpoints, want the leader's only", n)
	}
	nodeID, host, port := endpoint(0)
	if got := net.JoinHostPort(host, strconv.Itoa(int(port))); nodeID != part.Leader || got != leaderAddr {
		return fmt.Sprintf("node endpoint %d at %s, want %d at %s", nodeID, got, part.Leader, leaderAddr)
	}
	return ""
}

// awaitAnswer sends req to addr on a connection of its own until check
// returns "" for the answer, or fails the test with the last difference.
func awaitAnswer(ctx context.Context, t *testing.T, addr string, req kmsg.Request, check func(kmsg.Response) string) {
	t.Helper()
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("kip951-test")).AppendRequest(nil, req, 1)
	testutil.EventuallyNoError(t, untilDone(ctx), func() error {
		conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			return err
		}
		resp := decodeResponse(t, frame, roundTrip(t, conn, frame))
		conn.Close()
		if diff := check(resp); diff != "" {
			return errors.New(diff)
		}
		return nil
	}, "%s: key %d v%d answers as expected", addr, req.Key(), req.GetVersion())
}

// untilDone is the time left before ctx's deadline.
func untilDone(ctx context.Context) time.Duration {
	deadline, _ := ctx.Deadline()
	return time.Until(deadline)
}

// startThreeNodes formats and starts 3 combined sluice nodes on free ports
// and returns their client addresses, node i+1 at index i.
func startThreeNodes(t *testing.T) []string {
	t.Helper()
	bin := testbin.Build(t)
	ports, err := testbin.FreePorts(6)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "storage", "random-uuid").Output()
	if err != nil {
		t.Fatalf("storage random-uuid: %v", err)
	}
	clusterID := strings.TrimSpace(string(out))
	var voters []string
	for i := range 3 {
		voters = append(voters, fmt.Sprintf("%d@127.0.0.1:%d", i+1, ports[2*i+1]))
	}
	addrs := make([]string, 3)
	for i := range 3 {
		addrs[i] = fmt.Sprintf("127.0.0.1:%d", ports[2*i])
		var args []string
		for _, kv := range []string{
			"process.roles=broker,controller", fmt.Sprintf("node.id=%d", i+1),
			"controller.quorum.voters=" + strings.Join(voters, ","), "controller.listener.names=CONTROLLER",
			fmt.Sprintf("listeners=PLAINTEXT://%s,CONTROLLER://127.0.0.1:%d", addrs[i], ports[2*i+1]),
			"advertised.listeners=PLAINTEXT://" + addrs[i], "log.dirs=" + t.TempDir(),
			"offsets.topic.replication.factor=1",
		} {
			args = append(args, "--override", kv)
		}
		format := append([]string{"storage", "format", "--cluster-id", clusterID, "--config", "/dev/null"}, args...)
		if out, err := exec.Command(bin, format...).CombinedOutput(); err != nil {
			t.Fatalf("format node %d: %v\n%s", i+1, err, out)
		}
		p := testbin.StartProcess(t, fmt.Sprintf("node %d", i+1), bin, append([]string{"server"}, args...)...)
		t.Cleanup(func() { p.Stop(30 * time.Second) })
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, a := range addrs {
		if err := testbin.WaitForAPIVersions(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	return addrs
}
