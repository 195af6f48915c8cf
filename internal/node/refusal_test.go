package node

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/commitlog/logdir"
	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/quorum"
	"github.com/sluice-io/sluice/internal/testbin"
	"github.com/sluice-io/sluice/internal/vfs"
)

// freePorts returns n distinct free ports on 127.0.0.1.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	ports, err := testbin.FreePorts(n)
	if err != nil {
		t.Fatal(err)
	}
	return ports
}

// controllerNode builds a formatted controller-only node.
func controllerNode(t *testing.T, id int32, port int, voters, clusterID string) *Node {
	t.Helper()
	dir := t.TempDir()
	if err := logdir.Format(vfs.Default, []string{dir}, clusterID, id, false); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse("", map[string]string{
		"process.roles":             "controller",
		"node.id":                   fmt.Sprint(id),
		"log.dirs":                  dir,
		"listeners":                 fmt.Sprintf("CONTROLLER://127.0.0.1:%d", port),
		"controller.listener.names": "CONTROLLER",
		"controller.quorum.voters":  voters,
	})
	if err != nil {
		t.Fatal(err)
	}
	n, err := New(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestVoterRefusedByTheQuorumStops: nodes 1 and 2 form a quorum of two;
// node 3 lists itself as a third voter. Both refuse it, so its Run ends
// with the RefusedError naming both lists, while the two keep running.
func TestVoterRefusedByTheQuorumStops(t *testing.T) {
	if testing.Short() {
		t.Skip("waits about ten refusals")
	}
	ports := freePorts(t, 3)
	quorumVoters := fmt.Sprintf("1@127.0.0.1:%d,2@127.0.0.1:%d", ports[0], ports[1])
	wrongVoters := quorumVoters + fmt.Sprintf(",3@127.0.0.1:%d", ports[2])
	id, err := kafka.RandomUUID()
	if err != nil {
		t.Fatal(err)
	}
	clusterID := id.String()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	good := make(chan error, 2)
	for i, id := range []int32{1, 2} {
		n := controllerNode(t, id, ports[i], quorumVoters, clusterID)
		go func() { good <- n.Run(ctx) }()
	}
	odd := controllerNode(t, 3, ports[2], wrongVoters, clusterID)
	done := make(chan error, 1)
	go func() { done <- odd.Run(context.Background()) }()
	select {
	case err = <-done:
	case err = <-good:
		t.Fatalf("a node of the quorum stopped: %v", err)
	case <-time.After(40 * time.Second):
		t.Fatal("the refused voter is still running")
	}
	var refused *quorum.RefusedError
	if !errors.As(err, &refused) {
		t.Fatalf("Run ended with %v, want a RefusedError", err)
	}
	for _, want := range []string{quorumVoters, wrongVoters} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("%q does not name the voter list %q", err, want)
		}
	}
	select {
	case err := <-good:
		t.Fatalf("a node of the quorum stopped: %v", err)
	default:
	}
	cancel()
	for range 2 {
		if err := <-good; err != nil {
			t.Fatalf("stopping a node of the quorum: %v", err)
		}
	}
}
