package quorum

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-io/sluice/internal/testutil"
	"github.com/sluice-io/sluice/internal/vfs"
)

// tcpCluster is n voters in one process, each with a real TCPTransport on
// its own 127.0.0.1 listener.
type tcpCluster struct {
	t          *testing.T
	ids        []int32
	addrs      map[int32]string
	lns        map[int32]net.Listener
	drivers    map[int32]*Driver
	transports map[int32]*TCPTransport
	applied    map[int32]*appliedLog
	dirs       map[int32]string
	stores     map[int32]*MemoryEntryStore
	// snapshotPad, when above 0, turns snapshots on (every ~100 bytes of
	// entries) with snapshots of at least that many bytes.
	snapshotPad int
	machines    map[int32]*listMachine
}

func newTCPCluster(t testing.TB, n int, timing Timing) *tcpCluster {
	return newTCPClusterWithSnapshots(t, n, timing, 0)
}

func newTCPClusterWithSnapshots(t testing.TB, n int, timing Timing, snapshotPad int) *tcpCluster {
	c := &tcpCluster{machines: map[int32]*listMachine{}, addrs: map[int32]string{}, lns: map[int32]net.Listener{}, drivers: map[int32]*Driver{},
		transports: map[int32]*TCPTransport{}, applied: map[int32]*appliedLog{}, dirs: map[int32]string{}, stores: map[int32]*MemoryEntryStore{}}
	c.snapshotPad = snapshotPad
	for i := range n {
		id := int32(i + 1)
		c.ids = append(c.ids, id)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		c.lns[id], c.addrs[id] = ln, ln.Addr().String()
		c.dirs[id], c.stores[id] = t.TempDir(), NewMemoryEntryStore()
	}
	for _, id := range c.ids {
		c.start(t, id, timing)
	}
	t.Cleanup(func() {
		for _, id := range c.ids {
			c.crash(t, id)
		}
	})
	return c
}

// start (re)starts a voter: a listener on its address, a transport, a driver.
func (c *tcpCluster) start(t testing.TB, id int32, timing Timing) {
	ln := c.lns[id]
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", c.addrs[id]); err != nil {
			t.Fatal(err)
		}
	}
	c.lns[id] = nil
	tr, err := NewTCPTransport(TCPOptions{ClusterID: "c1", NodeID: id, Voters: c.addrs, BackoffMin: 10 * time.Millisecond, BackoffMax: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	m := &listMachine{pad: c.snapshotPad}
	c.machines[id], c.applied[id] = m, &m.appliedLog
	opts := Options{
		NodeID: id, Voters: c.ids, ElectionTimeout: timing.ElectionTimeout, FetchTimeout: timing.FetchTimeout, TickInterval: timing.TickInterval,
		FS: vfs.Default, Dir: c.dirs[id], Store: c.stores[id], Transport: tr, Apply: m.apply,
	}
	if c.snapshotPad > 0 {
		opts.Snapshots = snapshotOptions(vfs.Default, c.dirs[id], m, 100, 2)
	}
	d, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	tr.Start(d)
	tr.Serve(ln)
	d.Start()
	c.drivers[id], c.transports[id] = d, tr
}

// crash stops a voter's driver and transport (its listener closes).
func (c *tcpCluster) crash(t testing.TB, id int32) {
	d := c.drivers[id]
	if d == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := d.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	c.transports[id].Stop()
	delete(c.drivers, id)
}

// leader waits (wall clock) for one leader among the running voters that
// they all agree on.
func (c *tcpCluster) leader(t testing.TB) int32 {
	t.Helper()
	var leader int32
	testutil.Eventually(t, 20*time.Second, func() bool {
		leader = -1
		for _, d := range c.drivers {
			if st := d.Status(); st.IsLeader {
				leader = st.NodeID
			}
		}
		for _, d := range c.drivers {
			if d.Status().Leader != leader {
				return false
			}
		}
		return leader != -1
	}, "a leader over TCP")
	return leader
}

// propose commits data through whichever voter leads, retrying only when
// refused as not the leader (nothing was appended then): under load on
// this shared machine leadership may move mid-test.
func (c *tcpCluster) propose(t testing.TB, data string) {
	t.Helper()
	testutil.EventuallyNoError(t, 20*time.Second, func() error {
		for _, id := range c.ids {
			d := c.drivers[id]
			if d == nil || !d.Status().IsLeader {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_, err := d.Propose(ctx, []byte(data))
			cancel()
			if err == nil {
				return nil
			}
			if !errors.Is(err, ErrNotLeader) {
				t.Fatalf("propose %q: %v", data, err)
			}
		}
		return errors.New("no leader took it")
	}, "propose %q", data)
}

func fastTiming() Timing {
	return Timing{TickInterval: 10 * time.Millisecond, ElectionTimeout: 100 * time.Millisecond, FetchTimeout: 200 * time.Millisecond}
}

func TestTCPTransportElectsReplicatesAndFailsOver(t *testing.T) {
	c := newTCPCluster(t, 3, fastTiming())
	for i := range 5 {
		c.propose(t, fmt.Sprint("e", i))
	}
	leader := c.leader(t)
	c.crash(t, leader)
	next := c.leader(t)
	if next == leader {
		t.Fatalf("leader %d survived its crash", leader)
	}
	c.propose(t, "after")
	c.start(t, leader, fastTiming())
	want := []string{"e0", "e1", "e2", "e3", "e4", "after"}
	testutil.Eventually(t, 10*time.Second, func() bool { return slices.Equal(c.applied[leader].data(), want) }, "restarted voter to catch up over TCP")
}

// dialRaw opens a connection to a voter and sends a hello.
func dialRaw(t *testing.T, addr string, h hello) net.Conn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeFrame(nc, h.encode()); err != nil {
		t.Fatal(err)
	}
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	return nc
}

func TestTCPTransportRefusesForeignClusterAndVoters(t *testing.T) {
	c := newTCPCluster(t, 3, fastTiming())
	good := hello{version: rpcVersion, clusterID: "c1", voters: VoterString(c.addrs), from: 2, to: 1}
	for name, h := range map[string]hello{
		"cluster": {version: rpcVersion, clusterID: "other", voters: good.voters, from: 2, to: 1},
		"voters":  {version: rpcVersion, clusterID: "c1", voters: "2@127.0.0.1:1", from: 2, to: 1},
		"to":      {version: rpcVersion, clusterID: "c1", voters: good.voters, from: 2, to: 3},
		"version": {version: rpcVersion + 1, clusterID: "c1", voters: good.voters, from: 2, to: 1},
	} {
		nc := dialRaw(t, c.addrs[1], h)
		f, err := readFrame(nc, maxHelloBytes)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		status, reason, err := decodeHelloReply(f)
		if err != nil || status != helloRefused || reason == "" {
			t.Fatalf("%s: status %d reason %q err %v", name, status, reason, err)
		}
		if _, err := nc.Read(make([]byte, 1)); err != io.EOF {
			t.Fatalf("%s: connection not closed after refusal: %v", name, err)
		}
		nc.Close()
	}
	// The dialing side reports the reason too.
	foreign, err := NewTCPTransport(TCPOptions{ClusterID: "other", NodeID: 2, Voters: c.addrs})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := foreign.peers[RaftID(1)].dial(); err == nil || !strings.Contains(err.Error(), "cluster") {
		t.Fatalf("foreign dial: %v", err)
	}
}

func TestTCPTransportClosesOnMalformedFrames(t *testing.T) {
	c := newTCPCluster(t, 3, fastTiming())
	good := hello{version: rpcVersion, clusterID: "c1", voters: VoterString(c.addrs), from: 2, to: 1}
	heartbeatFrom3, _ := proto.Marshal(&raftpb.Message{Type: raftpb.MsgHeartbeat.Enum(), From: proto.Uint64(RaftID(3)), To: proto.Uint64(RaftID(1)), Term: proto.Uint64(1)})
	hugeLength := make([]byte, 4)
	binary.BigEndian.PutUint32(hugeLength, 1<<31-1)
	for name, send := range map[string][]byte{
		"garbage proto": frameBytes([]byte{kindMessage, 0xff, 0xff, 0xff}),
		"unknown kind":  frameBytes([]byte{9, 1, 2}),
		"huge length":   hugeLength,
		"wrong sender":  frameBytes(append([]byte{kindMessage}, heartbeatFrom3...)),
	} {
		nc := dialRaw(t, c.addrs[1], good)
		f, err := readFrame(nc, maxHelloBytes)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if status, reason, _ := decodeHelloReply(f); status != helloAccepted {
			t.Fatalf("%s: refused: %s", name, reason)
		}
		if _, err := nc.Write(send); err != nil {
			t.Fatal(err)
		}
		if _, err := nc.Read(make([]byte, 1)); err != io.EOF {
			t.Fatalf("%s: connection not closed: %v", name, err)
		}
		nc.Close()
	}
	if c.drivers[1].Err() != nil {
		t.Fatalf("voter failed: %v", c.drivers[1].Err())
	}
}

func frameBytes(payload []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(payload)))
	return append(b, payload...)
}

func TestLargeMessagesGoInChunks(t *testing.T) {
	server, client := net.Pipe()
	data := make([]byte, 3*maxFrameBytes/2)
	for i := range data {
		data[i] = byte(i)
	}
	go func() {
		writeMessage(client, data)
		writeMessage(client, []byte("small"))
		client.Close()
	}()
	got, err := readMessage(server, len(data))
	if err != nil || !slices.Equal(got, data) {
		t.Fatalf("chunked: %d bytes, %v", len(got), err)
	}
	if got, err := readMessage(server, len(data)); err != nil || string(got) != "small" {
		t.Fatalf("small: %q %v", got, err)
	}
	if !IsRPCPrefix(frameBytes(hello{clusterID: "x"}.encode())[:8]) {
		t.Fatal("hello prefix not recognised")
	}
}

func TestLeaderStatusShowsReplicaProgress(t *testing.T) {
	c := newTCPCluster(t, 3, fastTiming())
	c.propose(t, "x")
	var leader int32
	testutil.Eventually(t, 10*time.Second, func() bool {
		leader = c.leader(t)
		st := c.drivers[leader].Status()
		off := st.CommitOffset
		if len(st.Replicas) != 3 {
			return false
		}
		for i, r := range st.Replicas {
			if r.NodeID != c.ids[i] || r.EndOffset < off+1 || !r.RecentActive {
				return false
			}
		}
		return true
	}, "every voter's progress at the leader's commit")
	for _, id := range c.ids {
		if id != leader && c.drivers[id].Status().Replicas != nil {
			t.Fatalf("follower %d reports replica progress", id)
		}
	}
}

// TestTCPLaggingVoterGetsChunkedSnapshot stops a voter while the others
// compact their logs behind snapshots larger than one frame, then restarts
// it: it must catch up through a chunked MsgSnap.
func TestTCPLaggingVoterGetsChunkedSnapshot(t *testing.T) {
	if testing.Short() {
		t.Skip("moves several 5 MiB snapshots")
	}
	c := newTCPClusterWithSnapshots(t, 3, fastTiming(), 5<<20)
	leader := c.leader(t)
	var lagging int32
	for _, id := range c.ids {
		if id != leader {
			lagging = id
			break
		}
	}
	c.crash(t, lagging)
	var want []string
	for i := range 12 {
		data := fmt.Sprintf("entry-%02d-%s", i, strings.Repeat("x", 20))
		c.propose(t, data)
		want = append(want, data)
	}
	for _, id := range c.ids {
		if d := c.drivers[id]; d != nil && d.Status().LogStartOffset == 0 {
			t.Fatalf("voter %d did not compact its log", id)
		}
	}
	c.start(t, lagging, fastTiming())
	m := c.machines[lagging]
	testutil.Eventually(t, 10*time.Second, func() bool { return slices.Equal(m.data(), want) }, "lagging voter to catch up over TCP")
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.restores == 0 {
		t.Fatal("caught up without a snapshot")
	}
}

// nopVoter is a LocalVoter that ignores everything.
type nopVoter struct{}

func (nopVoter) Step(*raftpb.Message)       {}
func (nopVoter) ReportUnreachable(int32)    {}
func (nopVoter) ReportSnapshot(int32, bool) {}

// TestTCPTransportReportsRefusalByTheQuorum: node 3 lists a voter the
// others do not; nodes 1 and 2 refuse it, which leaves it no majority, so
// it reports once, naming both lists. Nodes 1 and 2 are refused by node 3
// only and report nothing.
func TestTCPTransportReportsRefusalByTheQuorum(t *testing.T) {
	addrs := map[int32]string{}
	lns := map[int32]net.Listener{}
	for id := int32(1); id <= 3; id++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns[id], addrs[id] = ln, ln.Addr().String()
	}
	wrong := maps.Clone(addrs)
	wrong[4] = "127.0.0.1:1"
	reports := make(chan *RefusedError, 10)
	transports := map[int32]*TCPTransport{}
	for id := int32(1); id <= 3; id++ {
		voters := addrs
		if id == 3 {
			voters = wrong
		}
		tr, err := NewTCPTransport(TCPOptions{
			ClusterID: "c1", NodeID: id, Voters: voters, MaxRefusals: 3,
			BackoffMin: 5 * time.Millisecond, BackoffMax: 20 * time.Millisecond,
			OnRefused: func(e *RefusedError) { reports <- e },
		})
		if err != nil {
			t.Fatal(err)
		}
		transports[id] = tr
		tr.Start(nopVoter{})
		tr.Serve(lns[id])
		t.Cleanup(tr.Stop)
	}
	var e *RefusedError
	select {
	case e = <-reports:
	case <-time.After(10 * time.Second):
		t.Fatal("node 3 was never reported refused")
	}
	if e.NodeID != 3 || len(e.Refusals) != 2 {
		t.Fatalf("report: %+v", e)
	}
	msg := e.Error()
	for _, want := range []string{VoterString(addrs), VoterString(wrong), "node 1 at", "node 2 at"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("report %q does not name %q", msg, want)
		}
	}
	refusedBy3 := func(id int32) int {
		tr := transports[id]
		tr.mu.Lock()
		defer tr.mu.Unlock()
		return tr.refusals.inRow[3]
	}
	testutil.Eventually(t, 10*time.Second, func() bool { return refusedBy3(1) >= 6 && refusedBy3(2) >= 6 }, "nodes 1 and 2 refused by node 3 repeatedly")
	select {
	case e := <-reports:
		t.Fatalf("a second report: %v", e)
	default:
	}
}
