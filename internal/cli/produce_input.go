package cli

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
)

// producerOptions maps the --acks and --compression flags to kgo options.
// Idempotence needs acks=all; it is switched off for weaker acks, and on
// request (idempotent=false).
func producerOptions(acks, compression string, idempotent bool) ([]kgo.Opt, error) {
	var opts []kgo.Opt
	switch strings.ToLower(acks) {
	case "all", "-1":
		opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
		if !idempotent {
			opts = append(opts, kgo.DisableIdempotentWrite())
		}
	case "1":
		opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	case "0":
		opts = append(opts, kgo.RequiredAcks(kgo.NoAck()), kgo.DisableIdempotentWrite())
	default:
		return nil, fmt.Errorf("--acks %q: want all, -1, 1 or 0", acks)
	}
	var codec kgo.CompressionCodec
	switch strings.ToLower(compression) {
	case "none", "":
		codec = kgo.NoCompression()
	case "gzip":
		codec = kgo.GzipCompression()
	case "snappy":
		codec = kgo.SnappyCompression()
	case "lz4":
		codec = kgo.Lz4Compression()
	case "zstd":
		codec = kgo.ZstdCompression()
	default:
		return nil, fmt.Errorf("--compression %q: want none, gzip, snappy, lz4 or zstd", compression)
	}
	return append(opts, kgo.ProducerBatchCompression(codec)), nil
}

// recordHeaders parses -H key=value flags.
func recordHeaders(flags []string) ([]kgo.RecordHeader, error) {
	var out []kgo.RecordHeader
	for _, h := range flags {
		k, v, err := splitKeyValue("-H", h)
		if err != nil {
			return nil, err
		}
		out = append(out, kgo.RecordHeader{Key: k, Value: []byte(v)})
	}
	return out, nil
}

// unescape interprets the escapes a shell user types for separators:
// \n, \t, \r, \0 and \\.
func unescape(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 == len(s) {
			return "", errors.New("trailing backslash")
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '0':
			b.WriteByte(0)
		case '\\':
			b.WriteByte('\\')
		default:
			return "", fmt.Errorf("unknown escape \\%c", s[i])
		}
	}
	return b.String(), nil
}

// splitOn is a bufio.SplitFunc cutting the input at every delim; a final
// piece without a trailing delimiter is a record too.
func splitOn(delim []byte) bufio.SplitFunc {
	return func(data []byte, atEOF bool) (int, []byte, error) {
		if i := bytes.Index(data, delim); i >= 0 {
			return i + len(delim), data[:i], nil
		}
		if atEOF && len(data) > 0 {
			return len(data), data, nil
		}
		return 0, nil, nil
	}
}
