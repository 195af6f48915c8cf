package cli

import (
	"errors"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

func TestOpenTransactionsOlderThanTheTimeout(t *testing.T) {
	p := kadm.DescribedProducersPartition{Topic: "t", Partition: 0, ActiveProducers: kadm.DescribedProducers{
		1: {Topic: "t", ProducerID: 1, CurrentTxnStartOffset: 5, LastTimestamp: 1000},  // idle 9 s
		2: {Topic: "t", ProducerID: 2, CurrentTxnStartOffset: -1, LastTimestamp: 1000}, // no transaction
		3: {Topic: "t", ProducerID: 3, CurrentTxnStartOffset: 7, LastTimestamp: 9000},  // idle 1 s
		4: {Topic: "t", ProducerID: 4, CurrentTxnStartOffset: 0, LastTimestamp: 5000},  // idle exactly 5 s
	}}
	got := openTransactions(p, 10_000, 5000)
	if len(got) != 1 || got[0].ProducerID != 1 {
		t.Fatalf("open transactions idle over 5 s: %+v, want producer 1 only", got)
	}
	if got := openTransactions(p, 10_000, 0); len(got) != 3 {
		t.Fatalf("with a zero timeout: %+v, want producers 1, 3 and 4", got)
	}
}

func TestFilterHangingIsKafkasRule(t *testing.T) {
	candidates := []kadm.DescribedProducer{
		{Topic: "t", Partition: 0, ProducerID: 1}, // no coordinator lists producer 1
		{Topic: "t", Partition: 0, ProducerID: 2}, // its id has no state
		{Topic: "t", Partition: 0, ProducerID: 3}, // its transaction has t-0
		{Topic: "t", Partition: 1, ProducerID: 3}, // ... but not t-1
		{Topic: "t", Partition: 0, ProducerID: 4}, // complete: no partitions
	}
	var running kadm.TopicsSet
	running.Add("t", 0)
	descriptions := map[string]*kadm.DescribedTransaction{
		"b": nil,
		"c": {TxnID: "c", State: "Ongoing", Topics: running},
		"d": {TxnID: "d", State: "CompleteCommit"},
	}
	got := filterHanging(candidates, map[int64]string{2: "b", 3: "c", 4: "d"}, descriptions)
	var keys []string
	for _, h := range got {
		keys = append(keys, fmt.Sprintf("%s-%d/%d", h.Topic, h.Partition, h.ProducerID))
	}
	want := []string{"t-0/1", "t-0/2", "t-1/3", "t-0/4"}
	if len(keys) != len(want) {
		t.Fatalf("hanging %v, want %v", keys, want)
	}
	for i := range want {
		if keys[i] != want[i] {
			t.Fatalf("hanging %v, want %v", keys, want)
		}
	}
}

func TestSplitTopicsSet(t *testing.T) {
	var s kadm.TopicsSet
	s.Add("a", 0, 1, 2)
	s.Add("b", 0, 1)
	batches := splitTopicsSet(s, 2)
	if len(batches) != 3 {
		t.Fatalf("%d batches of 5 partitions by 2, want 3: %v", len(batches), batches)
	}
	total := 0
	for _, b := range batches {
		n := 0
		b.Each(func(string, int32) { n++ })
		if n > 2 {
			t.Fatalf("batch %v has %d partitions", b, n)
		}
		total += n
	}
	if total != 5 || !batches[1].Lookup("a", 2) || !batches[1].Lookup("b", 0) {
		t.Fatalf("batches %v do not hold the 5 partitions in order", batches)
	}
	if got := splitTopicsSet(nil, 500); len(got) != 0 {
		t.Fatalf("an empty set split into %v", got)
	}
}

func TestListFilterNeedsTheVersionThatCarriesIt(t *testing.T) {
	for _, tc := range []struct {
		f       listFilter
		version int16
		ok      bool
	}{
		{listFilter{durationMs: -1, states: []string{"Ongoing"}}, 0, true},
		{listFilter{durationMs: 0}, 0, false},
		{listFilter{durationMs: 0}, 1, true},
		{listFilter{durationMs: -1, pattern: "a.*"}, 1, false},
		{listFilter{durationMs: -1, pattern: "a.*"}, 2, true},
	} {
		err := checkListVersion(tc.f, 1, tc.version)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, kerr.UnsupportedVersion)) {
			t.Errorf("filter %+v at v%d: %v, want ok=%t", tc.f, tc.version, err, tc.ok)
		}
	}
}

func TestMissingAPINamesTheRequest(t *testing.T) {
	keys := []int16{keyDescribeProducers, keyListTransactions, keyDescribeTransactions}
	if err := missingAPI(1, func(int16) bool { return true }, keys); err != nil {
		t.Fatalf("every key advertised: %v", err)
	}
	err := missingAPI(2, func(k int16) bool { return k != keyListTransactions }, keys)
	want := "broker 2 does not serve ListTransactions (API key 66 is not advertised): " +
		"UNSUPPORTED_VERSION: The version of API is not supported."
	if err == nil || err.Error() != want || !errors.Is(err, kerr.UnsupportedVersion) {
		t.Fatalf("got %v, want %q", err, want)
	}
}
