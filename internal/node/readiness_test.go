package node

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/testutil"
)

// TestBrokerReadinessConditions: each unmet condition is named; a broker
// registered, caught up with its registration and unfenced is ready.
func TestBrokerReadinessConditions(t *testing.T) {
	image := func(fenced bool) *metadata.Image {
		d := metadata.NewDelta(metadata.EmptyImage())
		if err := d.Replay(7, 1, &metadata.RegisterBrokerRecord{BrokerID: 1, BrokerEpoch: 7, Fenced: fenced}); err != nil {
			t.Fatal(err)
		}
		return d.Apply()
	}
	for _, c := range []struct {
		name       string
		registered bool
		epoch      int64
		im         *metadata.Image
		want       string
	}{
		{"unregistered", false, -1, image(false), "broker: not registered with the controller"},
		{"nothing published", true, 7, nil, "broker: metadata not caught up: nothing published yet"},
		{"registration not published", true, 7, metadata.EmptyImage(), "broker: metadata not caught up"},
		{"older registration published", true, 9, image(false), "does not hold this broker's registration (epoch 9)"},
		{"fenced", true, 7, image(true), "broker: fenced by the controller (epoch 7)"},
		{"ready", true, 7, image(false), ""},
	} {
		got := brokerReadiness(1, c.registered, c.epoch, c.im)
		if c.want == "" {
			if len(got) != 0 {
				t.Errorf("%s: unmet %q", c.name, got)
			}
			continue
		}
		if len(got) != 1 || !strings.Contains(got[0], c.want) {
			t.Errorf("%s: unmet %q, want one line with %q", c.name, got, c.want)
		}
	}
}

// TestReadyzOfARealCluster: a broker started before its controllers
// answers 503 "not registered"; one of two voters alone answers 503 "no
// leader"; once both voters run, every node answers 200 on /readyz, and
// /healthz was 200 all along. A broker whose heartbeats stop is fenced by
// the controller once its session expires, and says so (its metadata
// still arrives: the observer does not depend on the heartbeats).
func TestReadyzOfARealCluster(t *testing.T) {
	id, err := kafka.RandomUUID()
	if err != nil {
		t.Fatal(err)
	}
	ports := snapshotClusterPorts(t, 6)
	c := &snapshotCluster{clusterID: id.String(), overrides: map[string]string{
		config.SluiceMetricsListener.Name():     "127.0.0.1:0",
		config.BrokerSessionTimeoutMs.Name():    "2000",
		config.BrokerHeartbeatIntervalMs.Name(): "200",
	}}
	base := t.TempDir()
	var voters []string
	for i := range 3 {
		m := &snapshotClusterNode{
			id: int32(i + 1), controller: i < 2, dir: filepath.Join(base, fmt.Sprintf("node-%d", i+1)),
			brokerAddr: fmt.Sprintf("127.0.0.1:%d", ports[2*i]), controllerAddr: fmt.Sprintf("127.0.0.1:%d", ports[2*i+1]),
		}
		if m.controller {
			voters = append(voters, fmt.Sprintf("%d@%s", m.id, m.controllerAddr))
		}
		c.nodes = append(c.nodes, m)
	}
	c.voters = strings.Join(voters, ",")
	t.Cleanup(func() {
		for i := range c.nodes {
			c.stop(t, i)
		}
	})
	for i := range c.nodes {
		c.format(t, i)
	}
	const broker, voter1, voter2 = 2, 0, 1

	c.launch(t, broker)
	awaitProbe(t, c.node(broker), "/readyz", http.StatusServiceUnavailable, "broker: not registered with the controller")
	awaitProbe(t, c.node(broker), "/healthz", http.StatusOK, "ok")

	c.launch(t, voter1)
	awaitProbe(t, c.node(voter1), "/readyz", http.StatusServiceUnavailable, "controller: the metadata quorum has no leader")
	awaitProbe(t, c.node(voter1), "/healthz", http.StatusOK, "ok")

	c.launch(t, voter2)
	for i := range c.nodes {
		c.awaitReady(t, i)
		awaitProbe(t, c.node(i), "/readyz", http.StatusOK, "ready")
	}

	c.node(broker).broker.lifecycle.Stop() // no more heartbeats
	awaitProbe(t, c.node(broker), "/readyz", http.StatusServiceUnavailable, "broker: fenced by the controller")
	awaitProbe(t, c.node(broker), "/healthz", http.StatusOK, "ok")
}

// awaitProbe polls path on n's metrics listener until it answers code with
// a body containing want.
func awaitProbe(t *testing.T, n *Node, path string, code int, want string) {
	t.Helper()
	testutil.EventuallyNoError(t, 30*time.Second, func() error {
		addr := n.MetricsAddr()
		if addr == "" {
			return errors.New("not listening yet")
		}
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != code || !strings.Contains(string(body), want) {
			return fmt.Errorf("answered %d %q", resp.StatusCode, body)
		}
		return nil
	}, "GET %s: want %d %q", path, code, want)
}
