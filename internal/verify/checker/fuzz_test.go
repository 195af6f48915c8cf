package checker

import (
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/verify/history"
)

var fuzzKinds = []history.Kind{history.Send, history.Ack, history.Fail, history.Info, history.Poll, history.Assign,
	history.Commit, history.TxnBegin, history.TxnCommit, history.TxnAbort, history.FaultStart, history.FaultEnd, history.Final, "junk"}

// fuzzOffsets are offsets that stress the dense and sparse stores.
var fuzzOffsets = []int64{-1, -7, 0, 1, 2, 3, 64, 65, denseSlack, denseSlack + 70, 1 << 40, math.MaxInt64, math.MinInt64}

// opsFromBytes decodes arbitrary bytes into a history, 6 bytes an op.
func opsFromBytes(data []byte) []history.Op {
	var ops []history.Op
	for ; len(data) >= 6; data = data[6:] {
		off := int64(data[4])
		if data[5]&1 == 1 {
			off = fuzzOffsets[int(data[4])%len(fuzzOffsets)]
		}
		if data[5]&2 == 2 && len(data) >= 14 {
			off = int64(binary.LittleEndian.Uint64(data[6:14]))
		}
		op := history.Op{
			Index:     int64(len(ops)),
			Time:      time.Duration(len(ops)) * time.Millisecond,
			Kind:      fuzzKinds[int(data[0])%len(fuzzKinds)],
			Process:   []string{"producer-1", "consumer-1", "consumer-2", "final", "txn-1"}[int(data[1])%5],
			Topic:     []string{"t", "u", ""}[int(data[2]>>6)%3],
			Partition: int32(data[2]&7) - 1,
			Offset:    off,
			Value:     fmt.Sprintf("v-%d", data[3]%16),
			Group:     "g",
		}
		if data[5]&4 == 4 {
			op.Txn = fmt.Sprintf("x%d", data[3]%3)
		}
		if data[5]&8 == 8 {
			op.Value = ""
		}
		ops = append(ops, op)
	}
	return ops
}

// FuzzCheck: Check never panics, is a function of its input, and keeps
// its bounds on what an anomaly carries.
func FuzzCheck(f *testing.F) {
	f.Add([]byte("abcdefghijklmnopqrstuvwxyz0123456789"))
	f.Add([]byte{0, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0, 0, 4, 1, 1, 1, 0, 0, 12, 3, 1, 0, 5, 0, 4, 1, 1, 2, 2, 0})
	f.Add([]byte{1, 0, 1, 1, 9, 1, 1, 0, 1, 2, 9, 1, 4, 1, 1, 1, 9, 1, 4, 1, 1, 2, 2, 2, 255, 255, 255, 255, 255, 255, 255, 127})
	f.Fuzz(func(t *testing.T, data []byte) {
		ops := opsFromBytes(data)
		a := check(ops, nil)
		b := check(ops, nil)
		if !reflect.DeepEqual(a, b) {
			t.Fatal("two checks of one history differ")
		}
		for _, an := range a.Anomalies {
			if len(an.Ops) > maxOps || an.Explain == "" || an.Kind == "" {
				t.Fatalf("anomaly out of bounds: %+v", an)
			}
		}
	})
}

// TestSpreadOffsetsStayCheap: offsets far apart (each within reach of the
// dense store's growth) do not make it allocate per gap.
func TestSpreadOffsetsStayCheap(t *testing.T) {
	var ops []history.Op
	for i := range 5000 {
		ops = append(ops, history.Op{Kind: history.Poll, Process: "consumer-1", Topic: "t", Offset: int64(i) * (denseSlack - 1), Value: fmt.Sprintf("v-%d", i)})
	}
	x := buildIndex(ops)
	if n := len(x.parts[0].dense); n > 4*5000+denseSlack {
		t.Fatalf("dense store of %d slots for 5000 offsets", n)
	}
}
