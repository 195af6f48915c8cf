package devcluster

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/internal/commitlog/metafile"
	"github.com/sluice-io/sluice/internal/vfs"
)

func TestPlanPorts(t *testing.T) {
	nodes, err := plan(Options{Nodes: 3, BasePort: 9092, MetricsBasePort: 9644, Console: "127.0.0.1:8080", Dir: "d"})
	if err != nil {
		t.Fatal(err)
	}
	want := [][3]string{
		{"127.0.0.1:9092", "127.0.0.1:9192", "127.0.0.1:9644"},
		{"127.0.0.1:9093", "127.0.0.1:9193", "127.0.0.1:9645"},
		{"127.0.0.1:9094", "127.0.0.1:9194", "127.0.0.1:9646"},
	}
	for i, n := range nodes {
		if got := [3]string{n.ClientAddr, n.ControllerAddr, n.MetricsAddr}; got != want[i] {
			t.Errorf("node %d listens on %v, want %v", n.ID, got, want[i])
		}
		if !filepath.IsAbs(n.LogDir) || filepath.Base(n.LogDir) != "node-"+string(rune('1'+i)) || filepath.Base(n.LogFile) != filepath.Base(n.LogDir)+".log" {
			t.Errorf("node %d: log dir %s, log file %s", n.ID, n.LogDir, n.LogFile)
		}
	}
	if got := voters(nodes); got != "1@127.0.0.1:9192,2@127.0.0.1:9193,3@127.0.0.1:9194" {
		t.Errorf("voters %s", got)
	}
}

func TestPlanRefuses(t *testing.T) {
	for name, opts := range map[string]Options{
		"no nodes":          {Nodes: 0, BasePort: 9092, MetricsBasePort: 9644},
		"too many nodes":    {Nodes: MaxNodes + 1, BasePort: 9092, MetricsBasePort: 9644},
		"port past 65535":   {Nodes: 3, BasePort: 65500, MetricsBasePort: 9644},
		"metrics on client": {Nodes: 3, BasePort: 9092, MetricsBasePort: 9094},
		"console on client": {Nodes: 3, BasePort: 9092, MetricsBasePort: 9644, Console: "127.0.0.1:9093"},
	} {
		if _, err := plan(opts); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestArgs(t *testing.T) {
	opts := Options{Nodes: 2, BasePort: 9092, MetricsBasePort: 9644, Console: "127.0.0.1:8080", Dir: "d", Overrides: []string{"num.partitions=5"}}
	nodes, err := plan(opts)
	if err != nil {
		t.Fatal(err)
	}
	one := strings.Join(args(nodes, nodes[0], opts), " ")
	two := strings.Join(args(nodes, nodes[1], opts), " ")
	for _, want := range []string{"node.id=1", "listeners=PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9192", "sluice.metrics.listener=127.0.0.1:9644",
		"sluice.console.listener=127.0.0.1:8080", "offsets.topic.replication.factor=2", "transaction.state.log.min.isr=2"} {
		if !strings.Contains(one, want) {
			t.Errorf("node 1's arguments lack %s: %s", want, one)
		}
	}
	if strings.Contains(two, "sluice.console.listener") || !strings.Contains(two, "node.id=2") {
		t.Errorf("node 2's arguments: %s", two)
	}
	// The user's overrides come last, so they win.
	if a := args(nodes, nodes[1], opts); a[len(a)-1] != "num.partitions=5" {
		t.Errorf("override not last: %v", a)
	}
}

func TestPrepareKeepsClusterID(t *testing.T) {
	dir := t.TempDir()
	opts := Options{Nodes: 3, BasePort: 9092, MetricsBasePort: 9644, Dir: dir}
	nodes, err := plan(opts)
	if err != nil {
		t.Fatal(err)
	}
	id, err := prepare(vfs.Default, dir, nodes)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		m, err := metafile.ReadMetaProperties(vfs.Default, filepath.Join(n.LogDir, metafile.MetaPropertiesFile))
		if err != nil || m.ClusterID != id || m.NodeID != n.ID {
			t.Fatalf("node %d: %+v %v, want cluster %s", n.ID, m, err, id)
		}
	}
	// A node whose dir was removed is formatted again into the same cluster.
	if err := os.RemoveAll(nodes[1].LogDir); err != nil {
		t.Fatal(err)
	}
	again, err := prepare(vfs.Default, dir, nodes)
	if err != nil || again != id {
		t.Fatalf("second prepare: %s %v, want %s", again, err, id)
	}
	// Fewer nodes than the dir holds would disagree on the voters.
	if _, err := prepare(vfs.Default, dir, nodes[:2]); err == nil || !strings.Contains(err.Error(), "more than 2 nodes") {
		t.Fatalf("prepare of 2 nodes on a 3-node dir: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"node-1", "node-2", "node-3"}) {
		t.Fatalf("data dir holds %v", names)
	}
}

func TestCheckPortsNamesTheTakenAddress(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	taken := l.Addr().(*net.TCPAddr).Port
	nodes, err := plan(Options{Nodes: 1, BasePort: taken, MetricsBasePort: taken + 1, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	err = checkPorts(nodes, "")
	if err == nil || !strings.Contains(err.Error(), l.Addr().String()+" is not free") {
		t.Fatalf("checkPorts with %s taken: %v", l.Addr(), err)
	}
}
