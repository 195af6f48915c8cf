package fetchwire

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/vfs"
)

// content is deterministic file content: byte i is i mod 251.
func content(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i % 251)
	}
	return b
}

func writeFile(t testing.TB, fsys vfs.FS, name string, data []byte) vfs.File {
	t.Helper()
	f, err := fsys.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// fileKinds returns an OS-backed file and an in-memory file with the same
// content.
func fileKinds(t testing.TB, data []byte) map[string]vfs.File {
	return map[string]vfs.File{
		"os":  writeFile(t, vfs.Default, filepath.Join(t.TempDir(), "00000000000000000000.log"), data),
		"mem": writeFile(t, vfs.NewMem(), "segment.log", data),
	}
}

// fixture builds a response exercising every field the version carries and
// the kmsg value Kafka's schema says it encodes.
func fixture(version int16, f vfs.File, data []byte) (*Response, *kmsg.FetchResponse) {
	rack := "rack-a"
	id := kafka.UUID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	r := &Response{
		ThrottleMillis: 7, ErrorCode: 0, SessionID: 99,
		Topics: []Topic{
			{Name: "alpha", ID: id, Partitions: []Partition{
				{
					Partition: 0, HighWatermark: 500, LastStableOffset: 450, LogStartOffset: 10,
					AbortedTransactions:  []AbortedTransaction{{ProducerID: 3, FirstOffset: 400}},
					PreferredReadReplica: -1,
					Records:              []Slice{{File: f, Pos: 100, Size: 300}, {File: f, Pos: 1000, Size: 200}},
				},
				{Partition: 1, ErrorCode: 6, HighWatermark: -1, LastStableOffset: -1, LogStartOffset: -1, PreferredReadReplica: -1},
			}},
			{Name: "beta", ID: kafka.UUID{15: 9}, Partitions: []Partition{
				{
					Partition: 2, HighWatermark: 5, LastStableOffset: 5, LogStartOffset: 0,
					AbortedTransactions: []AbortedTransaction{}, PreferredReadReplica: 3,
					Records: []Slice{{File: f, Pos: 0, Size: 61}},
				},
			}},
		},
	}
	if version >= 12 {
		p := &r.Topics[0].Partitions[1]
		p.DivergingEpoch = &EpochEndOffset{Epoch: 4, EndOffset: 321}
		p.CurrentLeader = &LeaderIDAndEpoch{LeaderID: 2, LeaderEpoch: 5}
		p.SnapshotID = &SnapshotID{EndOffset: 77, Epoch: 3}
	}
	if version >= 16 {
		r.NodeEndpoints = []NodeEndpoint{{NodeID: 2, Host: "broker-2", Port: 9092, Rack: &rack}, {NodeID: 3, Host: "b3", Port: 1}}
	}

	want := kmsg.NewPtrFetchResponse()
	want.SetVersion(version)
	want.ThrottleMillis, want.SessionID = 7, 99
	for _, t := range r.Topics {
		kt := kmsg.NewFetchResponseTopic()
		kt.Topic, kt.TopicID = t.Name, t.ID
		if version >= 13 {
			kt.Topic = ""
		} else {
			kt.TopicID = [16]byte{}
		}
		for _, p := range t.Partitions {
			kp := kmsg.NewFetchResponseTopicPartition()
			kp.Partition, kp.ErrorCode, kp.HighWatermark = p.Partition, p.ErrorCode, p.HighWatermark
			kp.LastStableOffset = p.LastStableOffset
			if version >= 5 {
				kp.LogStartOffset = p.LogStartOffset
			}
			if p.AbortedTransactions != nil {
				kp.AbortedTransactions = []kmsg.FetchResponseTopicPartitionAbortedTransaction{}
				for _, a := range p.AbortedTransactions {
					kp.AbortedTransactions = append(kp.AbortedTransactions, kmsg.FetchResponseTopicPartitionAbortedTransaction{ProducerID: a.ProducerID, FirstOffset: a.FirstOffset})
				}
			}
			if version >= 11 {
				kp.PreferredReadReplica = p.PreferredReadReplica
			}
			kp.RecordBatches = []byte{}
			for _, s := range p.Records {
				kp.RecordBatches = append(kp.RecordBatches, data[s.Pos:s.Pos+s.Size]...)
			}
			if d := p.DivergingEpoch; d != nil {
				kp.DivergingEpoch.Epoch, kp.DivergingEpoch.EndOffset = d.Epoch, d.EndOffset
			}
			if l := p.CurrentLeader; l != nil {
				kp.CurrentLeader.LeaderID, kp.CurrentLeader.LeaderEpoch = l.LeaderID, l.LeaderEpoch
			}
			if s := p.SnapshotID; s != nil {
				kp.SnapshotID.EndOffset, kp.SnapshotID.Epoch = s.EndOffset, s.Epoch
			}
			kt.Partitions = append(kt.Partitions, kp)
		}
		want.Topics = append(want.Topics, kt)
	}
	for _, n := range r.NodeEndpoints {
		want.Brokers = append(want.Brokers, kmsg.FetchResponseBroker{NodeID: n.NodeID, Host: n.Host, Port: n.Port, Rack: n.Rack})
	}
	return r, want
}

func encodeToBytes(t *testing.T, r *Response, version int16) []byte {
	t.Helper()
	enc, err := Encode(r, version)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	n, err := enc.WriteTo(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if n != enc.Len() || int64(buf.Len()) != enc.Len() {
		t.Fatalf("wrote %d bytes (buffer %d), Len says %d", n, buf.Len(), enc.Len())
	}
	return buf.Bytes()
}

// TestEncodeMatchesKmsgEveryVersion: for every version and both file kinds,
// our bytes equal kmsg's encoding of the same response, and kmsg decodes
// them back to it.
func TestEncodeMatchesKmsgEveryVersion(t *testing.T) {
	data := content(4096)
	for kind, f := range fileKinds(t, data) {
		for v := MinVersion; v <= MaxVersion; v++ {
			t.Run(fmt.Sprintf("%s/v%d", kind, v), func(t *testing.T) {
				r, want := fixture(v, f, data)
				got := encodeToBytes(t, r, v)
				if wantBytes := want.AppendTo(nil); !bytes.Equal(got, wantBytes) {
					t.Fatalf("encoding differs from kmsg\n got % x\nwant % x", got, wantBytes)
				}
				decoded := kmsg.NewPtrFetchResponse()
				decoded.SetVersion(v)
				if err := decoded.ReadFrom(got); err != nil {
					t.Fatalf("kmsg cannot decode: %v", err)
				}
				if !bytes.Equal(decoded.AppendTo(nil), got) {
					t.Fatal("decode and re-encode changed the bytes")
				}
				if rb := decoded.Topics[0].Partitions[0].RecordBatches; !bytes.Equal(rb, append(append([]byte{}, data[100:400]...), data[1000:1200]...)) {
					t.Fatalf("records of alpha-0 are wrong: %d bytes", len(rb))
				}
			})
		}
	}
}

// TestRecordsLengthEdges covers the compact-bytes length (size+1 as a
// varint) around its one-, two- and three-byte boundaries, and the int32
// length of non-flexible versions.
func TestRecordsLengthEdges(t *testing.T) {
	data := content(20000)
	f := writeFile(t, vfs.NewMem(), "seg", data)
	for _, v := range []int16{11, 12} {
		for _, size := range []int64{0, 1, 126, 127, 128, 16382, 16383, 16384} {
			t.Run(fmt.Sprintf("v%d/%d", v, size), func(t *testing.T) {
				r := &Response{Topics: []Topic{{Name: "t", Partitions: []Partition{{PreferredReadReplica: -1}}}}}
				if size > 0 {
					r.Topics[0].Partitions[0].Records = []Slice{{File: f, Pos: 5, Size: size}}
				}
				got := encodeToBytes(t, r, v)
				decoded := kmsg.NewPtrFetchResponse()
				decoded.SetVersion(v)
				if err := decoded.ReadFrom(got); err != nil {
					t.Fatal(err)
				}
				rb := decoded.Topics[0].Partitions[0].RecordBatches
				if rb == nil || !bytes.Equal(rb, data[5:5+size]) {
					t.Fatalf("records: %d bytes (nil %v), want %d", len(rb), rb == nil, size)
				}
			})
		}
	}
}

func TestEncodeRejects(t *testing.T) {
	f := writeFile(t, vfs.NewMem(), "seg", content(10))
	cases := map[string]struct {
		version int16
		r       Response
	}{
		"version 3":          {3, Response{}},
		"version 19":         {19, Response{}},
		"tags before v12":    {11, Response{Topics: []Topic{{Partitions: []Partition{{SnapshotID: &SnapshotID{}}}}}}},
		"endpoints at v15":   {15, Response{NodeEndpoints: []NodeEndpoint{{Host: "h"}}}},
		"endpoints at v11":   {11, Response{NodeEndpoints: []NodeEndpoint{{Host: "h"}}}},
		"negative slice":     {12, Response{Topics: []Topic{{Partitions: []Partition{{Records: []Slice{{File: f, Pos: 0, Size: -1}}}}}}}},
		"slice without file": {12, Response{Topics: []Topic{{Partitions: []Partition{{Records: []Slice{{Size: 1}}}}}}}},
	}
	for name, tc := range cases {
		if _, err := Encode(&tc.r, tc.version); err == nil {
			t.Errorf("%s: Encode accepted it", name)
		}
	}
}

func TestWriteFailsWhenFileIsShorterThanSlice(t *testing.T) {
	for kind, f := range fileKinds(t, content(100)) {
		r := &Response{Topics: []Topic{{Partitions: []Partition{{Records: []Slice{{File: f, Pos: 50, Size: 100}}}}}}}
		enc, err := Encode(r, 12)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := enc.WriteTo(io.Discard); err == nil {
			t.Errorf("%s: short file streamed without error", kind)
		}
		client, server := tcpPair(t)
		go io.Copy(io.Discard, client)
		if _, err := enc.WriteTo(server); err == nil {
			t.Errorf("%s over TCP: short file streamed without error", kind)
		}
	}
}

// tcpPair returns the two ends of a loopback TCP connection.
func tcpPair(t testing.TB) (client net.Conn, server *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s := <-accepted
	if s == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { client.Close(); s.Close() })
	return client, s.(*net.TCPConn)
}

// TestWriteFrameOverTCP: with an OS file the records go out with sendfile,
// with a memory file by copying; the receiver sees the same frame either
// way, head included.
func TestWriteFrameOverTCP(t *testing.T) {
	data := content(1 << 20)
	for kind, f := range fileKinds(t, data) {
		t.Run(kind, func(t *testing.T) {
			r, _ := fixture(17, f, data)
			r.Topics[1].Partitions[0].Records = []Slice{{File: f, Pos: 0, Size: int64(len(data))}}
			want := encodeToBytes(t, r, 17)
			enc, err := Encode(r, 17)
			if err != nil {
				t.Fatal(err)
			}
			head := []byte{0xde, 0xad, 0xbe, 0xef}
			client, server := tcpPair(t)
			received := make(chan []byte, 1)
			go func() {
				b, _ := io.ReadAll(io.LimitReader(client, int64(len(head))+enc.Len()))
				received <- b
			}()
			n, err := enc.WriteFrame(server, head)
			if err != nil {
				t.Fatal(err)
			}
			got := <-received
			if n != int64(len(got)) || !bytes.Equal(got[:4], head) || !bytes.Equal(got[4:], want) {
				t.Fatalf("received %d bytes (wrote %d), want head + %d bytes of body", len(got), n, len(want))
			}
		})
	}
}

// plainFile hides a file's OS handle, forcing the copy path.
type plainFile struct{ vfs.File }

// BenchmarkStreamPartition1MiB streams a 1 MiB partition to a loopback TCP
// socket: sendfile from an OS file, versus copying from the same OS file and
// from an in-memory file.
func BenchmarkStreamPartition1MiB(b *testing.B) {
	data := content(1 << 20)
	kinds := fileKinds(b, data)
	for name, f := range map[string]vfs.File{"sendfile": kinds["os"], "copy-osfile": plainFile{kinds["os"]}, "copy-memfile": kinds["mem"]} {
		b.Run(name, func(b *testing.B) {
			r := &Response{Topics: []Topic{{Name: "t", Partitions: []Partition{{Records: []Slice{{File: f, Size: int64(len(data))}}}}}}}
			enc, err := Encode(r, 17)
			if err != nil {
				b.Fatal(err)
			}
			client, server := tcpPair(b)
			done := make(chan struct{})
			go func() {
				defer close(done)
				io.Copy(io.Discard, client)
			}()
			b.SetBytes(enc.Len())
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := enc.WriteTo(server); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			server.Close()
			<-done
		})
	}
}
