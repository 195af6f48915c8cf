package checkpoint

import (
	"errors"
	"maps"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/vfs"
)

func TestWriteReadRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), RecoveryPointFile)
	want := map[kafka.TopicPartition]int64{
		{Topic: "orders", Partition: 1}:              42,
		{Topic: "orders", Partition: 0}:              7,
		{Topic: "__consumer_offsets", Partition: 49}: 0,
	}
	if err := Write(vfs.Default, path, want); err != nil {
		t.Fatal(err)
	}
	got, err := Read(vfs.Default, path)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(got, want) {
		t.Fatalf("Read = %v, want %v", got, want)
	}
	data, err := vfs.ReadFile(vfs.Default, path)
	if err != nil {
		t.Fatal(err)
	}
	const wantText = "0\n3\n__consumer_offsets 49 0\norders 0 7\norders 1 42\n"
	if string(data) != wantText {
		t.Fatalf("file = %q, want %q", data, wantText)
	}
}

func TestWriteEmpty(t *testing.T) {
	path := filepath.Join(t.TempDir(), ReplicationFile)
	if err := Write(vfs.Default, path, nil); err != nil {
		t.Fatal(err)
	}
	got, err := Read(vfs.Default, path)
	if err != nil || len(got) != 0 {
		t.Fatalf("Read = %v, %v; want empty", got, err)
	}
}

func TestReadMissingIsNotExist(t *testing.T) {
	_, err := Read(vfs.Default, filepath.Join(t.TempDir(), "nope"))
	if !vfs.IsNotExist(err) {
		t.Fatalf("err = %v, want not-exist", err)
	}
}

func TestParseAcceptsKafkaVariants(t *testing.T) {
	// Kafka's reader takes a last line without '\n' and any whitespace between fields.
	got, err := Parse("f", []byte("0\n1\nt\t3  9"))
	if err != nil {
		t.Fatal(err)
	}
	if got[kafka.TopicPartition{Topic: "t", Partition: 3}] != 9 || len(got) != 1 {
		t.Fatalf("Parse = %v", got)
	}
}

func TestParseRejectsMalformed(t *testing.T) {
	cases := []struct {
		name, data string
		line       int
	}{
		{"empty", "", 1},
		{"version not number", "x\n0\n", 1},
		{"unknown version", "1\n0\n", 1},
		{"missing count", "0\n", 2},
		{"count not number", "0\nabc\n", 2},
		{"negative count", "0\n-1\n", 2},
		{"too few entries", "0\n2\nt 0 1\n", 4},
		{"too many entries", "0\n1\nt 0 1\nt 1 2\n", 4},
		{"trailing blank line", "0\n0\n\n", 3},
		{"two fields", "0\n1\nt 0\n", 3},
		{"four fields", "0\n1\nt 0 1 2\n", 3},
		{"bad partition", "0\n1\nt x 1\n", 3},
		{"negative partition", "0\n1\nt -1 1\n", 3},
		{"partition overflow", "0\n1\nt 2147483648 1\n", 3},
		{"bad offset", "0\n1\nt 0 1.5\n", 3},
		{"duplicate", "0\n2\nt 0 1\nt 0 2\n", 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Parse("/logs/ckpt", []byte(c.data))
			if err == nil {
				t.Fatalf("Parse(%q) = %v, want error", c.data, got)
			}
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("err %v does not wrap ErrMalformed", err)
			}
			wantLine := "/logs/ckpt: line " + strconv.Itoa(c.line) + ":"
			if !strings.Contains(err.Error(), wantLine) {
				t.Fatalf("err %q does not contain %q", err, wantLine)
			}
		})
	}
}
