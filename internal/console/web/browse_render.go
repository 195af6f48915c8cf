package web

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kgo"
)

// maxShownBytes bounds how much of one key, value or header is rendered;
// the page says when a field was cut.
const maxShownBytes = 16 << 10

// shownRecord is a record as the browser page shows it: every field is
// plain text, escaped by html/template, so no byte of a record reaches the
// page as markup.
type shownRecord struct {
	Offset    int64
	Partition int32
	Timestamp string
	// TimestampType is Kafka's name: CreateTime (the producer's) or
	// LogAppendTime (the broker's, message.timestamp.type).
	TimestampType string
	Key           shownBytes
	Value         shownBytes
	Headers       []shownHeader
}

type shownHeader struct {
	Key   string
	Value shownBytes
}

// shownBytes is a rendered key, value or header value.
type shownBytes struct {
	Text string
	Null bool // a null key or value (not the same as empty)
	Size int
	// Note says how the bytes were rendered when not as asked ("not
	// UTF-8: escaped", "not JSON", "first 16 KiB of 40000 bytes").
	Note string
}

// showRecord renders rec as r asks.
func showRecord(rec *kgo.Record, r renderAs) shownRecord {
	sr := shownRecord{
		Offset:        rec.Offset,
		Partition:     rec.Partition,
		Timestamp:     rec.Timestamp.UTC().Format("2006-01-02 15:04:05.000 MST"),
		TimestampType: "CreateTime",
		Key:           showBytes(rec.Key, r),
		Value:         showBytes(rec.Value, r),
	}
	if rec.Attrs.TimestampType() == 1 {
		sr.TimestampType = "LogAppendTime"
	}
	// Header values are short tags: text unless the page asks for hex.
	headerRender := renderText
	if r == renderHex {
		headerRender = renderHex
	}
	for _, h := range rec.Headers {
		sr.Headers = append(sr.Headers, shownHeader{Key: escapeInvalid([]byte(h.Key)), Value: showBytes(h.Value, headerRender)})
	}
	return sr
}

// showBytes renders b as text, JSON (indented when it parses) or a hex dump.
// Text that is not valid UTF-8 is shown with its invalid bytes escaped.
func showBytes(b []byte, r renderAs) shownBytes {
	sb := shownBytes{Null: b == nil, Size: len(b)}
	if len(b) > maxShownBytes {
		sb.Note = fmt.Sprintf("first %d of %d bytes", maxShownBytes, len(b))
		b = b[:maxShownBytes]
	}
	switch r {
	case renderHex:
		sb.Text = hex.Dump(b)
		return sb
	case renderJSON:
		if sb.Note == "" && json.Valid(b) {
			var out bytes.Buffer
			if json.Indent(&out, b, "", "  ") == nil {
				sb.Text = out.String()
				return sb
			}
		}
		if len(b) > 0 && sb.Note == "" {
			sb.Note = "not JSON: shown as text"
		}
	}
	sb.Text = escapeInvalid(b)
	switch {
	case !utf8.Valid(b):
		sb.Note = joinNote(sb.Note, "not UTF-8: invalid bytes shown as \\xNN")
	case hasControl(b):
		sb.Note = joinNote(sb.Note, "control characters shown as \\xNN")
	}
	return sb
}

// escapeInvalid returns b as a string with every byte that is not part of
// valid UTF-8, and every control character but tab and newline, written as
// \xNN, so the page is always valid UTF-8 and shows every byte (an HTML
// parser turns NUL into U+FFFD and CR into a newline).
func escapeInvalid(b []byte) string {
	if utf8.Valid(b) && !hasControl(b) {
		return string(b)
	}
	var out []byte
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 || isControl(r) {
			out = append(out, `\x`...)
			out = strconv.AppendUint(out, uint64(b[0])>>4, 16)
			out = strconv.AppendUint(out, uint64(b[0])&0xf, 16)
		} else {
			out = append(out, b[:n]...)
		}
		b = b[n:]
	}
	return string(out)
}

// isControl reports an ASCII control character other than tab and newline.
func isControl(r rune) bool { return (r < 0x20 && r != '\t' && r != '\n') || r == 0x7f }

func hasControl(b []byte) bool {
	for _, c := range b {
		if isControl(rune(c)) {
			return true
		}
	}
	return false
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// formatMillis shows a Unix millisecond timestamp as UTC.
func formatMillis(ms int64) string {
	return time.UnixMilli(ms).UTC().Format(time.RFC3339Nano)
}
