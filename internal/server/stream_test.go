package server

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/api"
	"github.com/sluice-io/sluice/internal/fetchwire"
	"github.com/sluice-io/sluice/internal/vfs"
)

// TestStreamedFetchResponse: a handler answering with a fetchwire body gets
// a frame with the flexible response header, records streamed from a real
// file (sendfile), that kmsg decodes.
func TestStreamedFetchResponse(t *testing.T) {
	records := bytes.Repeat([]byte("batch-bytes;"), 10000)
	f, err := vfs.Default.Create(filepath.Join(t.TempDir(), "00000000000000000000.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(records, 0); err != nil {
		t.Fatal(err)
	}
	fetch := api.Handler{Key: 1, MinVersion: 4, MaxVersion: 18, Handle: func(_ context.Context, req *api.Request) api.Response {
		body, err := fetchwire.Encode(&fetchwire.Response{Topics: []fetchwire.Topic{{
			Name: "t", Partitions: []fetchwire.Partition{{
				HighWatermark: 10, LastStableOffset: 10, PreferredReadReplica: -1,
				Records: []fetchwire.Slice{{File: f, Pos: 0, Size: int64(len(records))}},
			}},
		}}}, req.Header.APIVersion)
		if err != nil {
			return api.CloseConnection(err)
		}
		return api.Stream(body)
	}}
	ts := startServer(t, nil, fetch)
	c := dial(t, ts.addr)
	for _, v := range []int16{4, 11, 12, 18} {
		send(t, c, kmsg.NewPtrFetchRequest(), v, int32(v))
		corr, body := readResponse(t, c, v >= 12)
		resp := kmsg.NewPtrFetchResponse()
		resp.SetVersion(v)
		if err := resp.ReadFrom(body); err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		if corr != int32(v) || !bytes.Equal(resp.Topics[0].Partitions[0].RecordBatches, records) {
			t.Fatalf("v%d: correlation %d, %d record bytes", v, corr, len(resp.Topics[0].Partitions[0].RecordBatches))
		}
	}
}
