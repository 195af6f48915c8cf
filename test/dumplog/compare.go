package dumplog

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
)

// Compare lists every disagreement between what Generate wrote and what
// DumpLogSegments printed for it (each problem the tool reported is one),
// plus any index entry Sluice wrote where Kafka's LogSegment would not have.
// An empty result is exact agreement.
func Compare(m Manifest, d Dump) []string {
	diffs := append([]string(nil), d.Problems...)
	seen := map[string]bool{}
	file := func(path string) *FileDump {
		seen[path] = true
		f := d.Files[path]
		if f == nil {
			diffs = append(diffs, fmt.Sprintf("%s: not dumped", filepath.Base(path)))
		}
		return f
	}
	for _, s := range m.Segments {
		diffs = append(diffs, compareSegmentSelf(s, m.IndexIntervalBytes)...)
		if f := file(s.LogFile); f != nil {
			diffs = append(diffs, compareLog(s, f)...)
		}
		if f := file(s.IndexFile); f != nil {
			diffs = append(diffs, compareIndex(s, f)...)
		}
		if f := file(s.TimeIndexFile); f != nil {
			diffs = append(diffs, compareTimeIndex(s, f)...)
		}
	}
	for _, snap := range m.Snapshots {
		if f := file(snap.File); f != nil && !reflect.DeepEqual(nonNil(f.Producers), snap.Producers) {
			diffs = append(diffs, fmt.Sprintf("%s: producers\n  kafka: %+v\n  want:  %+v",
				filepath.Base(snap.File), f.Producers, snap.Producers))
		}
	}
	for path := range d.Files {
		if !seen[path] {
			diffs = append(diffs, fmt.Sprintf("%s: dumped but not in the manifest", path))
		}
	}
	return diffs
}

func nonNil(p []ProducerSnapshotEntry) []ProducerSnapshotEntry {
	if p == nil {
		return []ProducerSnapshotEntry{}
	}
	return p
}

// compareSegmentSelf checks what Sluice wrote against the appended batches
// without the tool: the .log size, and index entries against Kafka's rule.
func compareSegmentSelf(s SegmentManifest, interval int) []string {
	var diffs []string
	name := filepath.Base(s.LogFile)
	var sum int64
	for _, b := range s.Batches {
		sum += b.Size
	}
	if sum != s.LogSize {
		diffs = append(diffs, fmt.Sprintf("%s: file is %d bytes, batches appended total %d", name, s.LogSize, sum))
	}
	idx, tidx := KafkaRuleIndexes(s, interval)
	if !reflect.DeepEqual(idx, s.Index) {
		diffs = append(diffs, fmt.Sprintf("%s: offset index differs from Kafka's rule\n  sluice: %v\n  kafka:  %v", name, s.Index, idx))
	}
	if !reflect.DeepEqual(tidx, s.TimeIndex) {
		diffs = append(diffs, fmt.Sprintf("%s: time index differs from Kafka's rule\n  sluice: %v\n  kafka:  %v", name, s.TimeIndex, tidx))
	}
	return diffs
}

func compareLog(s SegmentManifest, f *FileDump) []string {
	name := filepath.Base(s.LogFile)
	var diffs []string
	if f.StartOffset != s.BaseOffset {
		diffs = append(diffs, fmt.Sprintf("%s: starting offset %d, want %d", name, f.StartOffset, s.BaseOffset))
	}
	if len(f.Batches) != len(s.Batches) {
		diffs = append(diffs, fmt.Sprintf("%s: %d batches, want %d", name, len(f.Batches), len(s.Batches)))
	}
	for i := 0; i < min(len(f.Batches), len(s.Batches)); i++ {
		diffs = append(diffs, compareBatch(name, s.Batches[i], f.Batches[i])...)
	}
	return diffs
}

func compareBatch(file string, want BatchManifest, got DumpBatch) []string {
	where := fmt.Sprintf("%s batch at %d", file, want.BaseOffset)
	expect := map[string]string{
		"baseOffset":           itoa(want.BaseOffset),
		"lastOffset":           itoa(want.LastOffset),
		"count":                itoa(int64(want.Count)),
		"baseSequence":         itoa(int64(want.BaseSequence)),
		"lastSequence":         itoa(int64(want.LastSequence)),
		"producerId":           itoa(want.ProducerID),
		"producerEpoch":        itoa(int64(want.ProducerEpoch)),
		"partitionLeaderEpoch": itoa(int64(want.PartitionLeaderEpoch)),
		"isTransactional":      strconv.FormatBool(want.Transactional),
		"isControl":            strconv.FormatBool(want.Control),
		"deleteHorizonMs":      "OptionalLong.empty",
		"position":             itoa(want.Position),
		"CreateTime":           itoa(want.MaxTimestamp),
		"size":                 itoa(want.Size),
		"magic":                "2",
		"compresscodec":        want.Codec,
		"crc":                  itoa(int64(want.CRC)),
		"isvalid":              "true",
	}
	diffs := compareFields(where, expect, got.Fields)
	if len(got.Records) != len(want.Records) {
		return append(diffs, fmt.Sprintf("%s: %d records, want %d", where, len(got.Records), len(want.Records)))
	}
	for i, r := range want.Records {
		diffs = append(diffs, compareRecord(fmt.Sprintf("%s record %d", file, r.Offset), r, got.Records[i])...)
	}
	return diffs
}

func compareRecord(where string, want RecordManifest, got DumpRecord) []string {
	expect := map[string]string{
		"offset":     itoa(want.Offset),
		"CreateTime": itoa(want.Timestamp),
		"keySize":    itoa(sizeOf(want.Key)),
		"valueSize":  itoa(sizeOf(want.Value)),
		"sequence":   itoa(int64(want.Sequence)),
		"headerKeys": "[" + strings.Join(want.HeaderKeys, ",") + "]",
	}
	if want.Marker != nil {
		// A marker's key is the control key (version, type) and its value
		// the version and coordinator epoch; the tool prints them decoded.
		expect["keySize"], expect["valueSize"] = "4", "6"
		expect["endTxnMarker"] = map[bool]string{true: "COMMIT", false: "ABORT"}[want.Marker.Commit]
		expect["coordinatorEpoch"] = itoa(int64(want.Marker.CoordinatorEpoch))
	}
	diffs := compareFields(where, expect, got.Fields)
	if !equalOpt(want.Key, got.Key) {
		diffs = append(diffs, fmt.Sprintf("%s: key %s, want %s", where, showOpt(got.Key), showOpt(want.Key)))
	}
	if !equalOpt(want.Value, got.Payload) {
		diffs = append(diffs, fmt.Sprintf("%s: payload %s, want %s", where, showOpt(got.Payload), showOpt(want.Value)))
	}
	return diffs
}

func compareFields(where string, want, got map[string]string) []string {
	var diffs []string
	for k, v := range want {
		g, ok := got[k]
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("%s: field %s missing, want %s", where, k, v))
		case g != v:
			diffs = append(diffs, fmt.Sprintf("%s: %s %s, want %s", where, k, g, v))
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: unexpected field %s: %s", where, k, g))
		}
	}
	return diffs
}

func compareIndex(s SegmentManifest, f *FileDump) []string {
	name := filepath.Base(s.IndexFile)
	if f.Empty != (len(s.Index) == 0) {
		return []string{fmt.Sprintf("%s: tool says empty=%v, sluice wrote %d entries", name, f.Empty, len(s.Index))}
	}
	if !reflect.DeepEqual(nonNilIndex(f.Index), s.Index) {
		return []string{fmt.Sprintf("%s: entries\n  kafka:  %v\n  sluice: %v", name, f.Index, s.Index)}
	}
	return nil
}

func compareTimeIndex(s SegmentManifest, f *FileDump) []string {
	got := f.TimeIndex
	if got == nil {
		got = []TimeIndexEntry{}
	}
	if !reflect.DeepEqual(got, s.TimeIndex) {
		return []string{fmt.Sprintf("%s: entries\n  kafka:  %v\n  sluice: %v", filepath.Base(s.TimeIndexFile), got, s.TimeIndex)}
	}
	return nil
}

func nonNilIndex(x []IndexEntry) []IndexEntry {
	if x == nil {
		return []IndexEntry{}
	}
	return x
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func sizeOf(s *string) int64 {
	if s == nil {
		return -1
	}
	return int64(len(*s))
}

func equalOpt(a, b *string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

func showOpt(s *string) string {
	if s == nil {
		return "null"
	}
	return strconv.Quote(*s)
}

// SanityProblems checks the output of a --index-sanity-check run over the
// given index and time index files: each must have passed (an offset index
// without entries is reported empty instead, which is only right when the
// manifest says so).
func SanityProblems(stdout, stderr string, m Manifest) []string {
	var problems []string
	lines := map[string]bool{}
	for _, l := range strings.Split(stdout, "\n") {
		lines[l] = true
	}
	for _, s := range m.Segments {
		for _, path := range []string{s.IndexFile, s.TimeIndexFile} {
			passed := lines["Dumping "+path] && lines[path+" passed sanity check."]
			empty := path == s.IndexFile && len(s.Index) == 0 && lines[path+" is empty."]
			if !passed && !empty {
				problems = append(problems, fmt.Sprintf("%s: did not pass the index sanity check", filepath.Base(path)))
			}
		}
	}
	if strings.TrimSpace(stderr) != "" {
		problems = append(problems, "sanity check stderr: "+stderr)
	}
	return problems
}
