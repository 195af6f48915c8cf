package cli

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/twmb/franz-go/pkg/kgo"
)

// recordFormat writes a consumed record following a format string such as
// "%p:%o %k=%v\n". It is parsed once into pieces; each piece is literal
// text or one record field.
type recordFormat struct {
	pieces []formatPiece
}

type formatPiece struct {
	literal []byte
	field   byte // 0 for a literal piece
}

// formatVerbs documents the verbs (also used by --help).
const formatVerbs = "%t topic, %p partition, %o offset, %k key, %v value, %h headers (k=v,k=v), " +
	"%T timestamp (Unix ms), %% a percent sign; escapes \\n \\t \\r \\0 \\\\"

// parseRecordFormat parses a format string with the verbs of formatVerbs.
func parseRecordFormat(s string) (*recordFormat, error) {
	s, err := unescape(s)
	if err != nil {
		return nil, fmt.Errorf("format %q: %w", s, err)
	}
	f := &recordFormat{}
	var lit []byte
	flush := func() {
		if len(lit) > 0 {
			f.pieces = append(f.pieces, formatPiece{literal: lit})
			lit = nil
		}
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			lit = append(lit, s[i])
			continue
		}
		if i+1 == len(s) {
			return nil, fmt.Errorf("format %q: ends with a lone %%", s)
		}
		i++
		switch v := s[i]; v {
		case '%':
			lit = append(lit, '%')
		case 't', 'p', 'o', 'k', 'v', 'h', 'T':
			flush()
			f.pieces = append(f.pieces, formatPiece{field: v})
		default:
			return nil, fmt.Errorf("format %q: unknown verb %%%c (known: %s)", s, v, formatVerbs)
		}
	}
	flush()
	return f, nil
}

// append renders r into buf.
func (f *recordFormat) append(buf []byte, r *kgo.Record) []byte {
	for _, p := range f.pieces {
		switch p.field {
		case 0:
			buf = append(buf, p.literal...)
		case 't':
			buf = append(buf, r.Topic...)
		case 'p':
			buf = strconv.AppendInt(buf, int64(r.Partition), 10)
		case 'o':
			buf = strconv.AppendInt(buf, r.Offset, 10)
		case 'k':
			buf = append(buf, r.Key...)
		case 'v':
			buf = append(buf, r.Value...)
		case 'h':
			for i, h := range r.Headers {
				if i > 0 {
					buf = append(buf, ',')
				}
				buf = append(buf, h.Key...)
				buf = append(buf, '=')
				buf = append(buf, h.Value...)
			}
		case 'T':
			buf = strconv.AppendInt(buf, r.Timestamp.UnixMilli(), 10)
		}
	}
	return buf
}

// jsonRecord is one line of --json output. Key and value are strings (bytes
// that are not UTF-8 are replaced by U+FFFD), null when the record has none.
type jsonRecord struct {
	Topic     string       `json:"topic"`
	Partition int32        `json:"partition"`
	Offset    int64        `json:"offset"`
	Timestamp int64        `json:"timestamp"`
	Key       *string      `json:"key"`
	Value     *string      `json:"value"`
	Headers   []jsonHeader `json:"headers"`
}

type jsonHeader struct {
	Key   string  `json:"key"`
	Value *string `json:"value"`
}

func nullableString(b []byte) *string {
	if b == nil {
		return nil
	}
	s := string(b)
	return &s
}

// appendJSON renders r as one JSON line into buf.
func appendJSON(buf []byte, r *kgo.Record) ([]byte, error) {
	j := jsonRecord{
		Topic:     r.Topic,
		Partition: r.Partition,
		Offset:    r.Offset,
		Timestamp: r.Timestamp.UnixMilli(),
		Key:       nullableString(r.Key),
		Value:     nullableString(r.Value),
		Headers:   make([]jsonHeader, 0, len(r.Headers)),
	}
	for _, h := range r.Headers {
		j.Headers = append(j.Headers, jsonHeader{Key: h.Key, Value: nullableString(h.Value)})
	}
	b, err := json.Marshal(j)
	if err != nil {
		return buf, fmt.Errorf("record %s/%d@%d as JSON: %w", r.Topic, r.Partition, r.Offset, err)
	}
	buf = append(buf, b...)
	return append(buf, '\n'), nil
}
