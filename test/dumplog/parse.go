package dumplog

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// Dump is the parsed output of one DumpLogSegments run: a section per
// "Dumping <file>" line, and the problems the tool reported.
type Dump struct {
	Files map[string]*FileDump
	// Problems are lines that report an error or mismatch, or that the
	// parser did not understand, each with where it came from.
	Problems []string
}

// FileDump is what the tool printed for one file.
type FileDump struct {
	Path string
	// StartOffset is the "Log starting offset" of a .log file.
	StartOffset int64
	// Empty says the tool printed "<file> is empty." (an index without entries).
	Empty     bool
	Batches   []DumpBatch
	Index     []IndexEntry
	TimeIndex []TimeIndexEntry
	Producers []ProducerSnapshotEntry
}

// DumpBatch is a batch line ("baseOffset: ... isvalid: true") and the
// record lines under it.
type DumpBatch struct {
	Fields  map[string]string
	Records []DumpRecord
}

// DumpRecord is a record line ("| offset: ..."): its metadata fields and,
// with --print-data-log, the key and payload (nil when not printed, which
// is how the tool shows a null key or value).
type DumpRecord struct {
	Fields       map[string]string
	Key, Payload *string
}

// ParseDump parses the tool's stdout and stderr. Unknown lines become
// problems rather than being skipped, so a format change cannot make the
// comparison pass vacuously.
func ParseDump(stdout, stderr string) Dump {
	d := Dump{Files: map[string]*FileDump{}}
	var cur *FileDump
	for n, line := range strings.Split(stdout, "\n") {
		if line == "" {
			continue
		}
		where := fmt.Sprintf("stdout line %d", n+1)
		if path, ok := strings.CutPrefix(line, "Dumping "); ok {
			cur = &FileDump{Path: path}
			d.Files[path] = cur
			continue
		}
		if cur == nil {
			d.Problems = append(d.Problems, fmt.Sprintf("%s: output before any file: %q", where, line))
			continue
		}
		if err := parseFileLine(cur, line); err != nil {
			d.Problems = append(d.Problems, fmt.Sprintf("%s (%s): %v: %q", where, filepath.Base(cur.Path), err, line))
		}
	}
	d.Problems = append(d.Problems, parseStderr(stderr, d.Files)...)
	return d
}

func parseFileLine(f *FileDump, line string) error {
	switch {
	case strings.HasPrefix(line, "Log starting offset: "):
		v, err := strconv.ParseInt(strings.TrimPrefix(line, "Log starting offset: "), 10, 64)
		f.StartOffset = v
		return err
	case line == f.Path+" is empty.":
		f.Empty = true
		return nil
	case strings.HasPrefix(line, "Found ") && strings.Contains(line, "invalid bytes"):
		return fmt.Errorf("tool found invalid bytes")
	}
	switch filepath.Ext(f.Path) {
	case ".log":
		return parseLogLine(f, line)
	case ".index":
		fields, err := parseFields(line)
		if err != nil {
			return err
		}
		e := IndexEntry{}
		return scanInts(fields, map[string]*int64{"offset": &e.Offset, "position": &e.Position}, func() {
			f.Index = append(f.Index, e)
		})
	case ".timeindex":
		fields, err := parseFields(line)
		if err != nil {
			return err
		}
		e := TimeIndexEntry{}
		return scanInts(fields, map[string]*int64{"timestamp": &e.Timestamp, "offset": &e.Offset}, func() {
			f.TimeIndex = append(f.TimeIndex, e)
		})
	case ".snapshot":
		return parseSnapshotLine(f, line)
	}
	return fmt.Errorf("unexpected line")
}

func parseLogLine(f *FileDump, line string) error {
	if rest, ok := strings.CutPrefix(line, "| "); ok {
		if len(f.Batches) == 0 {
			return fmt.Errorf("record line before any batch line")
		}
		r, err := parseRecordLine(rest)
		if err != nil {
			return err
		}
		b := &f.Batches[len(f.Batches)-1]
		b.Records = append(b.Records, r)
		return nil
	}
	if !strings.HasPrefix(line, "baseOffset: ") {
		return fmt.Errorf("unexpected line")
	}
	fields, err := parseFields(line)
	if err != nil {
		return err
	}
	f.Batches = append(f.Batches, DumpBatch{Fields: fields})
	return nil
}

// parseRecordLine splits off the printed payload and key (which may hold
// anything, even nothing) before reading the "name: value" fields.
func parseRecordLine(s string) (DumpRecord, error) {
	var r DumpRecord
	if i := strings.Index(s, " payload: "); i >= 0 {
		v := s[i+len(" payload: "):]
		r.Payload, s = &v, s[:i]
	}
	if i := strings.Index(s, " key: "); i >= 0 {
		v := s[i+len(" key: "):]
		r.Key, s = &v, s[:i]
	}
	fields, err := parseFields(s)
	r.Fields = fields
	return r, err
}

// parseFields reads "name: value name: value ..." where values hold no
// spaces.
func parseFields(s string) (map[string]string, error) {
	tokens := strings.Fields(s)
	out := map[string]string{}
	for i := 0; i < len(tokens); i += 2 {
		name, ok := strings.CutSuffix(tokens[i], ":")
		if !ok || i+1 >= len(tokens) {
			return out, fmt.Errorf("cannot read field at %q", tokens[i])
		}
		if _, dup := out[name]; dup {
			return out, fmt.Errorf("field %q twice", name)
		}
		out[name] = tokens[i+1]
	}
	return out, nil
}

// scanInts parses the named integer fields (exactly those) and calls done.
func scanInts(fields map[string]string, dst map[string]*int64, done func()) error {
	if len(fields) != len(dst) {
		return fmt.Errorf("want fields %d, got %d", len(dst), len(fields))
	}
	for name, p := range dst {
		v, err := strconv.ParseInt(fields[name], 10, 64)
		if err != nil {
			return fmt.Errorf("field %s: %w", name, err)
		}
		*p = v
	}
	done()
	return nil
}

func parseSnapshotLine(f *FileDump, line string) error {
	fields, err := parseFields(line)
	if err != nil {
		return err
	}
	// The transaction's first offset prints as a Java OptionalLong.
	txn := fields["currentTxnFirstOffset"]
	switch {
	case txn == "OptionalLong.empty":
		fields["currentTxnFirstOffset"] = "-1"
	case strings.HasPrefix(txn, "OptionalLong[") && strings.HasSuffix(txn, "]"):
		fields["currentTxnFirstOffset"] = txn[len("OptionalLong[") : len(txn)-1]
	}
	var e ProducerSnapshotEntry
	var epoch, coord, first, last, delta int64
	return scanInts(fields, map[string]*int64{
		"producerId": &e.ProducerID, "producerEpoch": &epoch, "coordinatorEpoch": &coord,
		"currentTxnFirstOffset": &e.CurrentTxnFirstOffset, "lastTimestamp": &e.LastTimestamp,
		"firstSequence": &first, "lastSequence": &last, "lastOffset": &e.LastOffset,
		"offsetDelta": &delta, "timestamp": &e.BatchTimestamp,
	}, func() {
		e.ProducerEpoch, e.CoordinatorEpoch = int16(epoch), int32(coord)
		e.FirstSequence, e.LastSequence, e.OffsetDelta = int32(first), int32(last), int32(delta)
		f.Producers = append(f.Producers, e)
	})
}

// parseStderr turns the tool's error report into problems. The one report
// that is not a problem: the tool checks each .log file's offsets from -1,
// so every segment after the first "starts" non-consecutively at its own
// base offset.
func parseStderr(stderr string, files map[string]*FileDump) []string {
	var problems []string
	var nonConsecutive *FileDump
	for _, line := range strings.Split(stderr, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		if path, ok := strings.CutPrefix(line, "Non-consecutive offsets in "); ok {
			nonConsecutive = files[path]
			if nonConsecutive == nil {
				problems = append(problems, "stderr: "+line)
			}
			continue
		}
		if nonConsecutive != nil {
			var from, to int64
			if _, err := fmt.Sscanf(line, "  %d is followed by %d", &from, &to); err == nil &&
				from == -1 && to == nonConsecutive.StartOffset {
				continue
			}
		}
		nonConsecutive = nil
		problems = append(problems, "stderr: "+line)
	}
	return problems
}
