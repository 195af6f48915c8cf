package node

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/commitlog"
	"github.com/sluice-io/sluice/internal/commitlog/metafile"
	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/vfs"
)

// startNode runs a node on an ephemeral port with its data in dir and
// returns its bootstrap address; the node stops in t.Cleanup (or by stop).
func startNode(t *testing.T, dir string) (n *Node, addr string, stop func()) {
	t.Helper()
	cfg, err := config.Parse("", map[string]string{
		"log.dirs":  dir,
		"listeners": "PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:0",
	})
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	n, err = New(cfg, logger, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	select {
	case <-n.Ready():
	case err := <-done:
		cancel()
		t.Fatalf("node stopped at start: %v", err)
	case <-time.After(20 * time.Second):
		cancel()
		t.Fatal("node not ready after 20s")
	}
	var once bool
	stop = func() {
		if once {
			return
		}
		once = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("node stop: %v", err)
		}
	}
	t.Cleanup(stop)
	return n, n.Addr("PLAINTEXT").String(), stop
}

func newAdmin(t *testing.T, addr string) (*kadm.Client, *kgo.Client) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl), cl
}

func TestNodeControlPlaneAndRestart(t *testing.T) {
	dir := t.TempDir()
	n, addr, stop := startNode(t, dir)
	adm, cl := newAdmin(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	created, err := adm.CreateTopics(ctx, 3, 1, map[string]*string{"retention.ms": kadm.StringPtr("123456")}, "orders")
	if err != nil || created["orders"].Err != nil {
		t.Fatalf("create topic: %v %v", err, created["orders"].Err)
	}
	bad, err := adm.CreateTopics(ctx, 1, 1, map[string]*string{"retention.ms": kadm.StringPtr("soon")}, "bad")
	if err != nil || !errors.Is(bad["bad"].Err, kerr.InvalidConfig) {
		t.Fatalf("a topic with an invalid config: %v %v, want INVALID_CONFIG", err, bad["bad"].Err)
	}

	md, err := adm.Metadata(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if got := len(md.Topics["orders"].Partitions); got != 3 {
		t.Fatalf("orders has %d partitions, want 3", got)
	}
	if md.Cluster == "" || md.Controller != 1 || len(md.Brokers) != 1 {
		t.Fatalf("metadata: cluster %q controller %d brokers %v", md.Cluster, md.Controller, md.Brokers)
	}

	rc, err := adm.DescribeTopicConfigs(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := rc.On("orders", nil); !hasConfig(v.Configs, "retention.ms", "123456") {
		t.Fatalf("retention.ms not described as set: %+v", v.Configs)
	}
	alter, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "retention.ms", Value: kadm.StringPtr("999")}}, "orders")
	if err != nil || alter[0].Err != nil {
		t.Fatalf("alter configs: %v %+v", err, alter)
	}
	rc, _ = adm.DescribeTopicConfigs(ctx, "orders")
	if v, _ := rc.On("orders", nil); !hasConfig(v.Configs, "retention.ms", "999") {
		t.Fatalf("retention.ms not altered: %+v", v.Configs)
	}
	openLog := func() *commitlog.Log {
		l, ok := n.storage.mgr.Get(kafka.TopicPartition{Topic: "orders", Partition: 0})
		if !ok {
			t.Fatal("orders-0 has no open log")
		}
		return l
	}
	if got := openLog().Options().RetentionMs; got != 999*time.Millisecond {
		t.Fatalf("open log's retention is %v after the change, want 999ms", got)
	}
	// A cluster-wide broker default reaches topics without their own value.
	set := []kadm.AlterConfig{{Name: "log.segment.bytes", Value: kadm.StringPtr("2097152")}}
	if res, err := adm.AlterBrokerConfigsState(ctx, set); err != nil || res[0].Err != nil {
		t.Fatalf("alter cluster default: %v %+v", err, res)
	}
	if got := openLog().Options().SegmentBytes; got != 2097152 {
		t.Fatalf("open log's segment.bytes is %d after the cluster default changed", got)
	}
	brokerCfg, err := adm.DescribeBrokerConfigs(ctx, 1)
	if err != nil || len(brokerCfg) != 1 || len(brokerCfg[0].Configs) < 100 {
		t.Fatalf("broker configs: %v (%d resources)", err, len(brokerCfg))
	}

	dirs, err := adm.DescribeAllLogDirs(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	partitions := 0
	dirs.Each(func(d kadm.DescribedLogDir) {
		d.Topics.Each(func(kadm.DescribedLogDirPartition) { partitions++ })
	})
	if partitions != 3 {
		t.Fatalf("log dirs describe %d partitions, want 3", partitions)
	}

	pid1 := initProducerID(t, ctx, cl)
	pid2 := initProducerID(t, ctx, cl)
	if pid1 == pid2 || pid1 < 0 {
		t.Fatalf("producer ids %d and %d", pid1, pid2)
	}

	stop()
	if _, err := os.Stat(filepath.Join(dir, ".kafka_cleanshutdown")); err != nil {
		t.Fatalf("no clean shutdown marker after stop: %v", err)
	}
	meta, err := metafile.ReadMetaProperties(vfs.Default, filepath.Join(dir, metafile.MetaPropertiesFile))
	if err != nil {
		t.Fatal(err)
	}

	_, addr, _ = startNode(t, dir)
	adm, cl = newAdmin(t, addr)
	md, err = adm.Metadata(ctx, "orders")
	if err != nil || len(md.Topics["orders"].Partitions) != 3 || md.Cluster != meta.ClusterID {
		t.Fatalf("after restart: %v, %d partitions, cluster %q (want %q)", err, len(md.Topics["orders"].Partitions), md.Cluster, meta.ClusterID)
	}
	rc, _ = adm.DescribeTopicConfigs(ctx, "orders")
	if v, _ := rc.On("orders", nil); !hasConfig(v.Configs, "retention.ms", "999") {
		t.Fatalf("retention.ms lost over a restart: %+v", v.Configs)
	}
	if pid3 := initProducerID(t, ctx, cl); pid3 <= pid2 {
		t.Fatalf("producer id %d after restart reuses one below %d", pid3, pid2)
	}
	deleted, err := adm.DeleteTopics(ctx, "orders")
	if err != nil || deleted["orders"].Err != nil {
		t.Fatalf("delete: %v %+v", err, deleted)
	}
	// kadm answers Metadata from the client's cache: ask the node itself.
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr("orders")}}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("deleted topic still described: %v %+v", err, resp)
	}
	if _, err := os.Stat(filepath.Join(dir, "orders-0")); !os.IsNotExist(err) {
		t.Fatalf("deleted topic's log dir remains: %v", err)
	}
}

func hasConfig(cfgs []kadm.Config, name, value string) bool {
	for _, c := range cfgs {
		if c.Key == name && c.Value != nil && *c.Value == value {
			return true
		}
	}
	return false
}

func initProducerID(t *testing.T, ctx context.Context, cl *kgo.Client) int64 {
	t.Helper()
	req := kmsg.NewPtrInitProducerIDRequest()
	req.ProducerID, req.ProducerEpoch = -1, -1
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || resp.ErrorCode != 0 {
		t.Fatalf("init producer id: %v code %d", err, resp.ErrorCode)
	}
	return resp.ProducerID
}

// TestAutoCreateFromProducer: a producer that allows auto-creation (the Java
// producer's default) creates a missing topic through Metadata.
func TestAutoCreateFromProducer(t *testing.T) {
	_, addr, _ := startNode(t, t.TempDir())
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.AllowAutoTopicCreation(), kgo.DefaultProduceTopic("fresh"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("produce to an auto-created topic: %v", err)
	}
	md, err := kadm.NewClient(cl).Metadata(ctx, "fresh")
	if err != nil || len(md.Topics["fresh"].Partitions) != 1 {
		t.Fatalf("auto-created topic: %v %+v", err, md.Topics["fresh"])
	}
}
