package api_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/protocol"
	"github.com/sluice-io/sluice/internal/testbin"
)

// The files in testdata/golden_errors are request and response frames of
// Apache Kafka 4.4.0 for error cases (testdata/golden_errors/README.md has
// the capture command). Each request is replayed, byte for byte, against a
// real Sluice node (the binary: its real server and handlers), and Sluice's
// response must equal Kafka's: byte for byte, except for the fields each
// case masks because they name this cluster (cluster id, listener ports).

type goldenErrorCase struct {
	name string
	// mask overwrites, in both decoded responses, the fields that
	// legitimately differ between two clusters.
	mask func(kmsg.Response)
}

func goldenErrorCases() []goldenErrorCase {
	return []goldenErrorCase{
		{name: "create_topics_invalid_name_v7"},
		{name: "create_topics_existing_v7"},
		{name: "metadata_unknown_topic_v12", mask: func(r kmsg.Response) {
			m := r.(*kmsg.MetadataResponse)
			// Another cluster: its own id, and its listener's port.
			m.ClusterID = kmsg.StringPtr("masked")
			for i := range m.Brokers {
				m.Brokers[i].Port = 0
			}
		}},
		{name: "produce_unknown_topic_acks1_v12"},
		{name: "list_offsets_unknown_partition_v9"},
		{name: "describe_configs_unknown_topic_v4"},
		{name: "delete_topics_unknown_v6"},
	}
}

func TestGoldenErrorResponsesMatchKafka(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the sluice binary")
	}
	addr := startGoldenNode(t)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// The cases expect golden-existing with one partition, as the capture
	// made it; its request is the create_topics_existing case's.
	createExisting := readGolden(t, "create_topics_existing_v7.req.bin")
	if resp := roundTrip(t, conn, createExisting); len(resp) == 0 {
		t.Fatal("no answer creating golden-existing")
	}

	for _, c := range goldenErrorCases() {
		t.Run(c.name, func(t *testing.T) {
			req := readGolden(t, c.name+".req.bin")
			want := readGolden(t, c.name+".resp.bin")
			got := roundTrip(t, conn, req)
			if bytes.Equal(got, want) {
				return
			}
			if c.mask == nil {
				t.Fatalf("response differs from Kafka's\n sluice: %s\n  kafka: %s\n sluice bytes %x\n  kafka bytes %x",
					describe(t, req, got), describe(t, req, want), got, want)
			}
			g, w := decodeResponse(t, req, got), decodeResponse(t, req, want)
			c.mask(g)
			c.mask(w)
			if !bytes.Equal(g.AppendTo(nil), w.AppendTo(nil)) {
				t.Fatalf("response differs from Kafka's (after masking)\n sluice: %s\n  kafka: %s", toJSON(t, g), toJSON(t, w))
			}
		})
	}
}

// startGoldenNode builds ./cmd/sluice and runs `sluice server` (auto topic
// creation off, as in the capture) on free ports until the test ends. The
// real binary, because this package may not import the node.
func startGoldenNode(t *testing.T) string {
	t.Helper()
	srv := testbin.StartServer(t, testbin.Build(t), testbin.ServerConfig{
		DataDir:   t.TempDir(),
		Overrides: []string{"auto.create.topics.enable=false"},
	})
	t.Cleanup(func() { srv.Stop(30 * time.Second) })
	return srv.Addr()
}

func readGolden(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "golden_errors", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// roundTrip sends a whole request frame and reads one whole response frame.
func roundTrip(t *testing.T, conn net.Conn, req []byte) []byte {
	t.Helper()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := conn.Write(req); err != nil {
		t.Fatal(err)
	}
	frame, err := protocol.ReadFrame(conn, 16<<20, nil)
	if err != nil {
		t.Fatalf("reading response: %v", err)
	}
	out := make([]byte, 4, 4+len(frame))
	binary.BigEndian.PutUint32(out, uint32(len(frame)))
	return append(out, frame...)
}

// decodeResponse decodes a response frame as the answer to the request frame.
func decodeResponse(t *testing.T, req, resp []byte) kmsg.Response {
	t.Helper()
	key, version := int16(binary.BigEndian.Uint16(req[4:])), int16(binary.BigEndian.Uint16(req[6:]))
	body := resp[8:] // size, correlation id
	if protocol.ResponseHeaderFlexible(key, version) {
		body = body[1:] // no header tags in these answers
	}
	r := kmsg.ResponseForKey(key)
	r.SetVersion(version)
	if err := r.ReadFrom(body); err != nil {
		t.Fatalf("decoding key %d v%d response: %v", key, version, err)
	}
	return r
}

func describe(t *testing.T, req, resp []byte) string {
	t.Helper()
	return toJSON(t, decodeResponse(t, req, resp))
}

func toJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(string(b), `"UnknownTags":{}`, "")
}
