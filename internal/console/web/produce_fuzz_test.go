package web

import (
	"errors"
	"net/url"
	"testing"
	"unicode/utf8"
)

// FuzzProduceAndResetForms: any posted form parses to a bounded message or
// reset, or to a 4xx httpError whose message is valid UTF-8; never a panic.
func FuzzProduceAndResetForms(f *testing.F) {
	for _, s := range []string{
		"topic=t&partition=1&key=k&value=v&headers=a%3D1%0Ab%3D2",
		"topic=t&partition=-1",
		"topic=%ff&headers=%3Dx",
		"target=shift&value=-5&topic=t",
		"target=timestamp&value=2024-01-01T00:00:00Z",
		"target=offset&value=99999999999999999999",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		check := func(what string, err error) {
			var he *httpError
			if !errors.As(err, &he) || he.status < 400 || he.status >= 500 {
				t.Fatalf("%s %q: error %v is not a 4xx httpError", what, raw, err)
			}
			if !utf8.ValidString(he.msg) {
				t.Fatalf("%s %q: message is not UTF-8: %q", what, raw, he.msg)
			}
		}
		if p, err := parseProduceForm(v); err != nil {
			check("produce", err)
		} else if p.Topic == "" || p.Partition < -1 || len(p.Headers) > maxProduceHeaders {
			t.Fatalf("produce %q: out of bounds: %+v", raw, p)
		}
		if s, err := parseResetSpec(v); err != nil {
			check("reset", err)
		} else if s.Target == resetOffset && s.Value < 0 {
			t.Fatalf("reset %q: negative offset %d", raw, s.Value)
		}
	})
}
