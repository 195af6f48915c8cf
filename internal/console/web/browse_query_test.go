package web

import (
	"errors"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseBrowseQueryDefaultsAndClamps(t *testing.T) {
	q, err := parseBrowseQuery(url.Values{"topic": {"orders"}})
	if err != nil {
		t.Fatal(err)
	}
	if q.Partition != 0 || q.Mode != modeOffset || q.Offset != -1 || q.Limit != defaultResults || q.Scan != defaultScan || q.Render != renderText || len(q.Notes) != 0 {
		t.Fatalf("defaults: %+v", q)
	}
	q, err = parseBrowseQuery(url.Values{"topic": {"orders"}, "limit": {"99999999999999999999999"}, "scan": {"5000000"}})
	if err != nil {
		t.Fatal(err)
	}
	if q.Limit != maxResults || q.Scan != maxScan || len(q.Notes) != 2 || !strings.Contains(q.Notes[0], "clamped to 500") {
		t.Fatalf("clamps: limit %d scan %d notes %q", q.Limit, q.Scan, q.Notes)
	}
}

func TestParseBrowseQueryRefusesBadInput(t *testing.T) {
	cases := []struct {
		v    url.Values
		want string
	}{
		{url.Values{}, "choose a topic"},
		{url.Values{"topic": {"t"}, "partition": {"-1"}}, "partition -1 is negative"},
		{url.Values{"topic": {"t"}, "partition": {"x"}}, "partition must be a whole number"},
		{url.Values{"topic": {"t"}, "offset": {"-5"}}, "offset -5 is negative"},
		{url.Values{"topic": {"t"}, "mode": {"timestamp"}, "ts": {"yesterday"}}, `timestamp "yesterday" is neither`},
		{url.Values{"topic": {"t"}, "mode": {"timestamp"}}, "timestamp missing"},
		{url.Values{"topic": {"t"}, "mode": {"sideways"}}, "mode must be"},
		{url.Values{"topic": {"t"}, "limit": {"0"}}, "limit must be at least 1"},
		{url.Values{"topic": {"t"}, "scan": {"lots"}}, "scan must be a whole number"},
		{url.Values{"topic": {"t"}, "render": {"<script>"}}, "render must be text, json or hex"},
		{url.Values{"topic": {"t"}, "q": {strings.Repeat("x", maxSearchLen+1)}}, "search text longer"},
	}
	for _, c := range cases {
		_, err := parseBrowseQuery(c.v)
		var qe *queryError
		if !errors.As(err, &qe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want a queryError containing %q", c.v, err, c.want)
		}
	}
}

func TestParseTimestampForms(t *testing.T) {
	for s, want := range map[string]int64{
		"1700000000000":             1700000000000,
		"2023-11-14T22:13:20Z":      1700000000000,
		"2023-11-14T22:13:20.5Z":    1700000000500,
		"2023-11-14T23:13:20+01:00": 1700000000000,
		"2023-11-14 22:13:20":       1700000000000,
		"2023-11-14":                1699920000000,
	} {
		got, err := parseTimestamp(s)
		if err != nil || got != want {
			t.Errorf("%q: %d, %v; want %d", s, got, err, want)
		}
	}
	if _, err := parseTimestamp("1969-12-31T00:00:00Z"); err == nil {
		t.Error("a time before 1970 was accepted")
	}
}

func TestBrowseQueryValuesRoundTrip(t *testing.T) {
	in := url.Values{"topic": {"a.b"}, "partition": {"3"}, "mode": {"newest"}, "before": {"77"}, "q": {"x y"}, "in": {"key"}, "limit": {"7"}, "scan": {"900"}, "render": {"hex"}}
	q, err := parseBrowseQuery(in)
	if err != nil {
		t.Fatal(err)
	}
	back, err := parseBrowseQuery(q.values())
	if err != nil {
		t.Fatal(err)
	}
	back.Notes, q.Notes = nil, nil
	if !reflect.DeepEqual(back, q) {
		t.Fatalf("round trip: %+v, want %+v", back, q)
	}
}

// FuzzParseBrowseQuery: any query string parses to a bounded query or a
// *queryError whose message is valid UTF-8; never a panic.
func FuzzParseBrowseQuery(f *testing.F) {
	for _, s := range []string{
		"topic=t&partition=0&offset=5",
		"topic=t&mode=timestamp&ts=2024-01-01T00:00:00Z",
		"topic=t&mode=newest&before=10&q=abc&in=value&limit=9999999&scan=-1",
		"topic=%ff%fe&partition=2147483648",
		"topic=t&render=json&limit=1e9",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		q, err := parseBrowseQuery(v)
		if err != nil {
			var qe *queryError
			if !errors.As(err, &qe) {
				t.Fatalf("%q: error %v is not a queryError", raw, err)
			}
			if !utf8.ValidString(err.Error()) {
				t.Fatalf("%q: message is not UTF-8: %q", raw, err.Error())
			}
			return
		}
		if q.Limit < 1 || q.Limit > maxResults || q.Scan < 1 || q.Scan > maxScan || q.Partition < 0 || q.Topic == "" {
			t.Fatalf("%q: out of bounds: %+v", raw, q)
		}
		for _, n := range q.Notes {
			if !utf8.ValidString(n) {
				t.Fatalf("%q: note is not UTF-8: %q", raw, n)
			}
		}
	})
}
