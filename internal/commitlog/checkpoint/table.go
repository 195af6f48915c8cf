// Package checkpoint reads and writes Kafka's offset checkpoint files
// (recovery-point-offset-checkpoint, replication-offset-checkpoint,
// log-start-offset-checkpoint, cleaner-offset-checkpoint) and the text
// framing they share with leader-epoch-checkpoint: a version line, a count
// line, then that many lines of whitespace-separated fields.
//
// Readers are strict: anything Kafka's CheckpointFile would reject is an
// error naming the file and line, wrapping ErrMalformed, so the caller can
// ignore the file and rebuild its contents as Kafka does.
package checkpoint

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Version is the only checkpoint file version Kafka has written.
const Version = 0

// ErrMalformed is wrapped by every error about a checkpoint file's content.
var ErrMalformed = errors.New("malformed checkpoint file")

// DecodeTable parses the version/count/rows framing of a checkpoint file,
// returning each row split into exactly width fields. name is the file's
// path, used only in errors.
func DecodeTable(name string, data []byte, width int) ([][]string, error) {
	lines := strings.Split(string(data), "\n")
	// The writer ends every line with '\n'; Kafka's line reader also accepts a
	// last line without one. Either way there is no trailing empty line.
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) < 1 {
		return nil, malformed(name, 1, "missing version line")
	}
	version, err := strconv.Atoi(lines[0])
	if err != nil {
		return nil, malformed(name, 1, fmt.Sprintf("version %q is not a number", lines[0]))
	}
	if version != Version {
		return nil, malformed(name, 1, fmt.Sprintf("unrecognised version %d", version))
	}
	if len(lines) < 2 {
		return nil, malformed(name, 2, "missing count line")
	}
	count, err := strconv.Atoi(lines[1])
	if err != nil {
		return nil, malformed(name, 2, fmt.Sprintf("count %q is not a number", lines[1]))
	}
	if count < 0 {
		return nil, malformed(name, 2, fmt.Sprintf("negative count %d", count))
	}
	entries := lines[2:]
	if len(entries) < count {
		return nil, malformed(name, len(lines)+1, fmt.Sprintf("expected %d entries, found %d", count, len(entries)))
	}
	if len(entries) > count {
		return nil, malformed(name, 2+count+1, fmt.Sprintf("expected %d entries, found more", count))
	}
	rows := make([][]string, 0, count)
	for i, line := range entries {
		fields := strings.Fields(line)
		if len(fields) != width {
			return nil, malformed(name, 3+i, fmt.Sprintf("want %d fields, found %d in %q", width, len(fields), line))
		}
		rows = append(rows, fields)
	}
	return rows, nil
}

// EncodeTable renders rows in the version/count/rows framing, fields
// separated by one space and every line ended by '\n', as Kafka writes it.
func EncodeTable(rows [][]string) []byte {
	var b strings.Builder
	b.WriteString(strconv.Itoa(Version))
	b.WriteByte('\n')
	b.WriteString(strconv.Itoa(len(rows)))
	b.WriteByte('\n')
	for _, row := range rows {
		b.WriteString(strings.Join(row, " "))
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// LineError builds a content error for line (1-based) of the file name,
// wrapping ErrMalformed; packages reusing the framing report their row
// errors with it.
func LineError(name string, line int, msg string) error { return malformed(name, line, msg) }

func malformed(name string, line int, msg string) error {
	return fmt.Errorf("%w %s: line %d: %s", ErrMalformed, name, line, msg)
}
