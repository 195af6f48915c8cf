package web

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The message browser's bounds: a page never holds more than maxResults
// records and a search never examines more than maxScan, whatever the URL
// asks; larger values are clamped and the page says so.
const (
	defaultResults = 50
	maxResults     = 500
	defaultScan    = 10_000
	maxScan        = 100_000
	// maxSearchLen bounds the search substring (it is matched against
	// every scanned key and value).
	maxSearchLen = 1024
)

// browseMode is where a page starts reading.
type browseMode string

const (
	modeOffset    browseMode = "offset"    // at an offset, forward
	modeTimestamp browseMode = "timestamp" // at the first offset with a timestamp >= ts, forward
	modeNewest    browseMode = "newest"    // from the end offset backwards
)

// renderAs is how keys and values are shown.
type renderAs string

const (
	renderText renderAs = "text"
	renderJSON renderAs = "json"
	renderHex  renderAs = "hex"
)

// searchIn says which part of a record the search substring is looked for in.
type searchIn string

const (
	searchBoth  searchIn = "both"
	searchKey   searchIn = "key"
	searchValue searchIn = "value"
)

// browseQuery is a parsed message browser URL.
type browseQuery struct {
	Topic     string
	Partition int32
	Mode      browseMode
	// Offset is the start offset (modeOffset) or, with modeNewest, the
	// exclusive upper bound of the page (-1: the end offset).
	Offset int64
	// Timestamp is the start time (modeTimestamp), in Unix milliseconds.
	Timestamp int64
	Search    string
	In        searchIn
	Limit     int
	Scan      int
	Render    renderAs
	// Notes tell the user what was changed in the request (clamped limits).
	Notes []string
}

// queryError is bad browser input: shown to the user with a 400.
type queryError struct{ msg string }

func (e *queryError) Error() string { return e.msg }

func badQuery(format string, args ...any) error {
	return &queryError{msg: fmt.Sprintf(format, args...)}
}

// parseBrowseQuery reads a browser URL's query. The topic is required; every
// other field has a default. Errors are *queryError with a message naming
// the field and the accepted form.
func parseBrowseQuery(v url.Values) (browseQuery, error) {
	q := browseQuery{Mode: modeOffset, Offset: -1, In: searchBoth, Render: renderText}
	q.Topic = strings.TrimSpace(v.Get("topic"))
	if q.Topic == "" {
		return q, badQuery("choose a topic")
	}
	if len(q.Topic) > 249 {
		return q, badQuery("topic name longer than Kafka's 249 characters")
	}
	var err error
	if q.Partition, err = parsePartition(v.Get("partition")); err != nil {
		return q, err
	}
	if err := q.parseMode(v); err != nil {
		return q, err
	}
	if err := q.parseSearch(v); err != nil {
		return q, err
	}
	if q.Limit, err = q.parseBound(v.Get("limit"), "limit", "results", defaultResults, maxResults); err != nil {
		return q, err
	}
	if q.Scan, err = q.parseBound(v.Get("scan"), "scan", "records scanned", defaultScan, maxScan); err != nil {
		return q, err
	}
	switch r := renderAs(v.Get("render")); r {
	case "":
	case renderText, renderJSON, renderHex:
		q.Render = r
	default:
		return q, badQuery("render must be text, json or hex, not %q", clip(string(r)))
	}
	return q, nil
}

// parsePartition reads a partition number; empty means partition 0.
func parsePartition(s string) (int32, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	p, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, badQuery("partition must be a whole number, not %q", clip(s))
	}
	if p < 0 {
		return 0, badQuery("partition %d is negative: partitions are numbered from 0", p)
	}
	return int32(p), nil
}

func (q *browseQuery) parseMode(v url.Values) error {
	switch m := browseMode(v.Get("mode")); m {
	case "", modeOffset:
		q.Mode = modeOffset
		return q.parseOffset(v.Get("offset"))
	case modeNewest:
		q.Mode = modeNewest
		return q.parseOffset(v.Get("before"))
	case modeTimestamp:
		q.Mode = modeTimestamp
		ts, err := parseTimestamp(v.Get("ts"))
		q.Timestamp = ts
		return err
	default:
		return badQuery("mode must be offset, timestamp or newest, not %q", clip(string(m)))
	}
}

// parseOffset reads an optional non-negative offset; empty leaves -1 (the
// log start offset forward, the end offset backwards).
func (q *browseQuery) parseOffset(s string) error {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	o, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return badQuery("offset must be a whole number, not %q", clip(s))
	}
	if o < 0 {
		return badQuery("offset %d is negative: offsets start at 0", o)
	}
	q.Offset = o
	return nil
}

// timestampLayouts are the forms a timestamp may be typed in, besides Unix
// milliseconds; a value without a zone is UTC.
var timestampLayouts = [...]string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02"}

// parseTimestamp reads Unix milliseconds or an RFC 3339 time.
func parseTimestamp(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, badQuery("timestamp missing: give Unix milliseconds or a time like 2024-05-01T12:00:00Z")
	}
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		if ms < 0 {
			return 0, badQuery("timestamp %d is negative: give Unix milliseconds since 1970", ms)
		}
		return ms, nil
	}
	for _, layout := range timestampLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			if t.Before(time.Unix(0, 0)) {
				return 0, badQuery("timestamp %q is before 1970", clip(s))
			}
			return t.UnixMilli(), nil
		}
	}
	return 0, badQuery("timestamp %q is neither Unix milliseconds nor a time like 2024-05-01T12:00:00Z", clip(s))
}

func (q *browseQuery) parseSearch(v url.Values) error {
	q.Search = v.Get("q")
	if len(q.Search) > maxSearchLen {
		return badQuery("search text longer than %d bytes", maxSearchLen)
	}
	switch in := searchIn(v.Get("in")); in {
	case "":
	case searchBoth, searchKey, searchValue:
		q.In = in
	default:
		return badQuery("search in must be key, value or both, not %q", clip(string(in)))
	}
	return nil
}

// parseBound reads a positive count, clamped to max with a note.
func (q *browseQuery) parseBound(s, field, what string, def, max int) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		if isDigits(s) { // too large for int64: clamp like any huge value
			n = int64(max) + 1
		} else {
			return 0, badQuery("%s must be a whole number, not %q", field, clip(s))
		}
	}
	if n <= 0 {
		return 0, badQuery("%s must be at least 1, not %d", field, n)
	}
	if n > int64(max) {
		q.Notes = append(q.Notes, fmt.Sprintf("%s %s is above the maximum: clamped to %d %s", field, clip(s), max, what))
		return max, nil
	}
	return int(n), nil
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// clip shortens user input quoted back in a message.
func clip(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if r := []rune(s); len(r) > 64 {
		return string(r[:64]) + "…"
	}
	return s
}

// values renders q back into a URL query (for links to other pages of the
// same browse).
func (q browseQuery) values() url.Values {
	v := url.Values{}
	v.Set("topic", q.Topic)
	v.Set("partition", strconv.Itoa(int(q.Partition)))
	v.Set("mode", string(q.Mode))
	switch q.Mode {
	case modeOffset:
		if q.Offset >= 0 {
			v.Set("offset", strconv.FormatInt(q.Offset, 10))
		}
	case modeNewest:
		if q.Offset >= 0 {
			v.Set("before", strconv.FormatInt(q.Offset, 10))
		}
	case modeTimestamp:
		v.Set("ts", strconv.FormatInt(q.Timestamp, 10))
	}
	if q.Search != "" {
		v.Set("q", q.Search)
		v.Set("in", string(q.In))
	}
	v.Set("limit", strconv.Itoa(q.Limit))
	v.Set("scan", strconv.Itoa(q.Scan))
	v.Set("render", string(q.Render))
	return v
}
