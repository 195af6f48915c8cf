package share

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/kafka"
)

func tp(topic byte, p int32) TopicIDPartition {
	return TopicIDPartition{TopicID: kafka.UUID{0: topic}, Partition: p}
}

// wantCode fails unless err carries the Kafka error want (nil for none).
func wantCode(t *testing.T, err error, want *kerr.Error) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatalf("unexpected error %v", err)
		}
		return
	}
	var ke *kerr.Error
	if !errors.As(err, &ke) || ke != want {
		t.Fatalf("error %v, want %s", err, want.Message)
	}
}

func TestShareFetchSessionEpochs(t *testing.T) {
	c := NewSessionCache(10)
	k := SessionKey{"g", "m1"}

	_, err := c.ShareFetch(k, 1, nil, nil, false, "c1")
	wantCode(t, err, kerr.ShareSessionNotFound)
	_, err = c.ShareFetch(k, FinalEpoch, nil, nil, false, "c1")
	wantCode(t, err, kerr.ShareSessionNotFound)
	_, err = c.ShareFetch(k, InitialEpoch, []TopicIDPartition{tp('a', 0)}, nil, true, "c1")
	wantCode(t, err, kerr.InvalidRequest)

	ctx, err := c.ShareFetch(k, InitialEpoch, []TopicIDPartition{tp('a', 0), tp('a', 1)}, nil, false, "c1")
	wantCode(t, err, nil)
	if !ctx.New || len(ctx.Partitions) != 2 {
		t.Fatalf("opening context %+v", ctx)
	}
	if e, _ := c.Epoch(k); e != 1 {
		t.Fatalf("new session epoch %d, want 1", e)
	}
	// A stale or future epoch is refused and changes nothing.
	for _, e := range []int32{0 + 2, 5, -2} {
		_, err = c.ShareFetch(k, e, []TopicIDPartition{tp('b', 0)}, nil, false, "c1")
		wantCode(t, err, kerr.InvalidShareSessionEpoch)
	}
	// Incremental: add b-0, forget a-0.
	ctx, err = c.ShareFetch(k, 1, []TopicIDPartition{tp('b', 0), tp('a', 1)}, []TopicIDPartition{tp('a', 0)}, true, "c1")
	wantCode(t, err, nil)
	if want := []TopicIDPartition{tp('a', 1), tp('b', 0)}; !slices.Equal(ctx.Partitions, want) {
		t.Fatalf("partitions %v, want %v", ctx.Partitions, want)
	}
	_, err = c.ShareFetch(k, 1, nil, nil, false, "c1")
	wantCode(t, err, kerr.InvalidShareSessionEpoch)
	_, err = c.ShareFetch(k, 2, nil, nil, false, "c1")
	wantCode(t, err, nil)

	// Epoch 0 again replaces the session.
	ctx, err = c.ShareFetch(k, InitialEpoch, []TopicIDPartition{tp('c', 0)}, nil, false, "c2")
	wantCode(t, err, nil)
	if e, _ := c.Epoch(k); e != 1 || len(ctx.Partitions) != 1 || c.Len() != 1 {
		t.Fatalf("replaced session epoch %d, context %+v, %d sessions", e, ctx, c.Len())
	}

	// Epoch -1: final, the session stays until Close.
	ctx, err = c.ShareFetch(k, FinalEpoch, nil, nil, true, "c2")
	wantCode(t, err, nil)
	if !ctx.Final || !slices.Equal(ctx.Partitions, []TopicIDPartition{tp('c', 0)}) {
		t.Fatalf("final context %+v", ctx)
	}
	parts, ok := c.Close(k)
	if !ok || len(parts) != 1 || c.Len() != 0 {
		t.Fatalf("close: %v %v, %d sessions", parts, ok, c.Len())
	}
	_, err = c.ShareFetch(k, 1, nil, nil, false, "c2")
	wantCode(t, err, kerr.ShareSessionNotFound)
}

func TestShareAcknowledgeSessionEpochs(t *testing.T) {
	c := NewSessionCache(10)
	k := SessionKey{"g", "m1"}
	_, err := c.ShareAcknowledge(k, InitialEpoch)
	wantCode(t, err, kerr.InvalidShareSessionEpoch)
	_, err = c.ShareAcknowledge(k, 1)
	wantCode(t, err, kerr.ShareSessionNotFound)
	_, err = c.ShareAcknowledge(k, FinalEpoch)
	wantCode(t, err, kerr.ShareSessionNotFound)

	if _, err := c.ShareFetch(k, InitialEpoch, []TopicIDPartition{tp('a', 0)}, nil, false, "c1"); err != nil {
		t.Fatal(err)
	}
	// Epoch 0 is refused even with a session.
	_, err = c.ShareAcknowledge(k, InitialEpoch)
	wantCode(t, err, kerr.InvalidShareSessionEpoch)
	_, err = c.ShareAcknowledge(k, 2)
	wantCode(t, err, kerr.InvalidShareSessionEpoch)
	_, err = c.ShareAcknowledge(k, 1)
	wantCode(t, err, nil)
	// ShareAcknowledge and ShareFetch share the epoch sequence.
	_, err = c.ShareFetch(k, 1, nil, nil, false, "c1")
	wantCode(t, err, kerr.InvalidShareSessionEpoch)
	_, err = c.ShareFetch(k, 2, nil, nil, false, "c1")
	wantCode(t, err, nil)
	final, err := c.ShareAcknowledge(k, FinalEpoch)
	wantCode(t, err, nil)
	if !final || c.Len() != 1 {
		t.Fatalf("final %v with %d sessions", final, c.Len())
	}
}

func TestSessionLimitAndDisconnect(t *testing.T) {
	c := NewSessionCache(2)
	for i, m := range []string{"m1", "m2"} {
		if _, err := c.ShareFetch(SessionKey{"g", m}, 0, []TopicIDPartition{tp('a', int32(i))}, nil, false, "conn-"+m); err != nil {
			t.Fatal(err)
		}
	}
	_, err := c.ShareFetch(SessionKey{"g", "m3"}, 0, nil, nil, false, "conn-m3")
	wantCode(t, err, kerr.ShareSessionLimitReached)
	// Reopening an existing member's session is not over the limit.
	_, err = c.ShareFetch(SessionKey{"g", "m1"}, 0, nil, nil, false, "conn-m1")
	wantCode(t, err, nil)

	key, parts, ok := c.Disconnect("conn-m2")
	if !ok || key != (SessionKey{"g", "m2"}) || !slices.Equal(parts, []TopicIDPartition{tp('a', 1)}) {
		t.Fatalf("disconnect: %v %v %v", key, parts, ok)
	}
	if _, _, ok := c.Disconnect("conn-m2"); ok {
		t.Fatal("second disconnect found a session")
	}
	_, err = c.ShareFetch(SessionKey{"g", "m3"}, 0, nil, nil, false, "conn-m3")
	wantCode(t, err, nil)
}

func TestNextEpochWraps(t *testing.T) {
	for in, want := range map[int32]int32{0: 1, 1: 2, math.MaxInt32: 1, -1: -1, -5: -1} {
		if got := nextEpoch(in); got != want {
			t.Errorf("nextEpoch(%d) = %d, want %d", in, got, want)
		}
	}
}

func TestValidateAckBatches(t *testing.T) {
	ok := []AckBatch{{0, 4, []int8{1}}, {4, 6, []int8{0, 2, 3}}}
	wantCode(t, ValidateAckBatches(ok, false), nil)
	for name, bs := range map[string][]AckBatch{
		"reversed":      {{5, 4, []int8{1}}},
		"overlap":       {{0, 4, []int8{1}}, {3, 6, []int8{1}}},
		"no types":      {{0, 4, nil}},
		"count":         {{0, 4, []int8{1, 1}}},
		"unknown type":  {{0, 0, []int8{5}}},
		"negative type": {{0, 0, []int8{-1}}},
		"renew":         {{0, 0, []int8{4}}},
	} {
		if err := ValidateAckBatches(bs, false); err == nil {
			t.Errorf("%s: accepted", name)
		} else {
			wantCode(t, err, kerr.InvalidRequest)
		}
	}
	wantCode(t, ValidateAckBatches([]AckBatch{{0, 0, []int8{4}}}, true), nil)
}

func TestPersisterError(t *testing.T) {
	for code, want := range map[int16]*kerr.Error{
		kerr.NotCoordinator.Code:            kerr.CoordinatorNotAvailable,
		kerr.CoordinatorLoadInProgress.Code: kerr.CoordinatorNotAvailable,
		kerr.FencedStateEpoch.Code:          kerr.NotLeaderForPartition,
		kerr.GroupIDNotFound.Code:           kerr.GroupIDNotFound,
		kerr.InvalidRequest.Code:            kerr.UnknownServerError,
	} {
		wantCode(t, PersisterError(code), want)
	}
	wantCode(t, PersisterError(0), nil)
}
