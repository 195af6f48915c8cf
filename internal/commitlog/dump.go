package commitlog

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/vfs"
)

// DumpSegment prints a .log, .index, .timeindex or .txnindex file, one line per batch
// or entry, for debugging and golden tests (like kafka-dump-log). Invalid
// bytes end the dump with a line saying where.
func DumpSegment(fsys vfs.FS, path string, w io.Writer) error {
	data, err := vfs.ReadFile(fsys, path)
	if err != nil {
		return fmt.Errorf("dump %s: %w", path, err)
	}
	name := filepath.Base(path)
	var base int64
	if _, err := fmt.Sscanf(name, "%020d", &base); err != nil {
		return fmt.Errorf("dump %s: name is not a segment file name", path)
	}
	switch {
	case strings.HasSuffix(name, logSuffix):
		return dumpLog(data, w)
	case strings.HasSuffix(name, indexSuffix):
		x := offsetIndex{baseOffset: base}
		valid := validOffsetIndexPrefix(data)
		for i := 0; i < len(valid)/offsetIndexEntrySize; i++ {
			e := x.decode(valid[i*offsetIndexEntrySize:])
			fmt.Fprintf(w, "offset: %d position: %d\n", e.Offset, e.Position)
		}
		return dumpTail(w, len(valid), len(data))
	case strings.HasSuffix(name, timeIndexSuffix):
		x := timeIndex{baseOffset: base}
		valid := validTimeIndexPrefix(data)
		for i := 0; i < len(valid)/timeIndexEntrySize; i++ {
			e := x.decode(valid[i*timeIndexEntrySize:])
			fmt.Fprintf(w, "timestamp: %d offset: %d\n", e.Timestamp, e.Offset)
		}
		return dumpTail(w, len(valid), len(data))
	case strings.HasSuffix(name, txnIndexSuffix):
		entries := decodeTxnIndex(data)
		for _, e := range entries {
			fmt.Fprintf(w, "producerId: %d firstOffset: %d lastOffset: %d lastStableOffset: %d\n", e.ProducerID, e.FirstOffset, e.LastOffset, e.LastStableOffset)
		}
		return dumpTail(w, len(entries)*txnIndexEntrySize, len(data))
	}
	return fmt.Errorf("dump %s: unknown file kind", path)
}

func dumpTail(w io.Writer, valid, size int) error {
	if size > valid {
		_, err := fmt.Fprintf(w, "unused or invalid bytes: %d\n", size-valid)
		return err
	}
	return nil
}

func dumpLog(data []byte, w io.Writer) error {
	pos := 0
	for pos < len(data) {
		h, err := records.ParseHeader(data[pos:])
		if err != nil || pos+int(h.Size()) > len(data) {
			fmt.Fprintf(w, "invalid batch at position %d (%d bytes left)\n", pos, len(data)-pos)
			return nil
		}
		b := data[pos : pos+int(h.Size())]
		crc := "valid"
		if records.CheckCRC(b) != nil {
			crc = "INVALID"
		}
		fmt.Fprintf(w, "baseOffset: %d lastOffset: %d count: %d position: %d size: %d epoch: %d maxTimestamp: %d producerId: %d crc: %s\n",
			h.BaseOffset, h.LastOffset(), h.RecordCount, pos, h.Size(), h.PartitionLeaderEpoch, h.MaxTimestamp, h.ProducerID, crc)
		pos += int(h.Size())
	}
	return nil
}
