package web

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseTopicForm(t *testing.T) {
	s, err := parseTopicForm(url.Values{"name": {" orders "}, "partitions": {"3"}, "replication_factor": {""},
		"configs": {"# comment\r\ncleanup.policy = compact\n\nretention.ms=1000"}})
	if err != nil {
		t.Fatal(err)
	}
	if s.name != "orders" || s.partitions != 3 || s.replication != -1 || len(s.configs) != 2 || *s.configs["cleanup.policy"] != "compact" {
		t.Fatalf("spec %+v", s)
	}
	for _, bad := range []url.Values{
		{"name": {""}},
		{"name": {strings.Repeat("x", 250)}},
		{"name": {"t"}, "partitions": {"0"}},
		{"name": {"t"}, "partitions": {"1e3"}},
		{"name": {"t"}, "partitions": {"100001"}},
		{"name": {"t"}, "replication_factor": {"40000"}},
		{"name": {"t"}, "configs": {"novalue"}},
		{"name": {"t"}, "configs": {"a=1\na=2"}},
		{"name": {"t"}, "configs": {strings.Repeat("a=1\n", maxConfigLines+1)}},
	} {
		_, err := parseTopicForm(bad)
		var he *httpError
		if !errors.As(err, &he) || he.status != http.StatusBadRequest {
			t.Errorf("%v: %v, want a 400", bad, err)
		}
	}
}

// FuzzForms: no input makes the form parsers panic, accept more than
// their bounds, or echo input that is not valid UTF-8 into a message.
func FuzzForms(f *testing.F) {
	f.Add("orders", "3", "1", "a=b\nc=d", "x,y", "7")
	f.Add("", "-1", "", "=", "\n\n", "-3")
	f.Add("\xff\xfe", "99999999999999999999", "0x10", "k=\xff", ",,,", "2147483648")
	f.Fuzz(func(t *testing.T, name, parts, rf, configs, deletes, broker string) {
		s, err := parseTopicForm(url.Values{"name": {name}, "partitions": {parts}, "replication_factor": {rf}, "configs": {configs}})
		if err == nil {
			if s.name == "" || len(s.name) > maxTopicNameLen || s.partitions == 0 || s.partitions > maxPartitions || s.replication == 0 {
				t.Fatalf("accepted %+v", s)
			}
			if len(s.configs) > maxConfigLines {
				t.Fatalf("%d configs", len(s.configs))
			}
		} else if !utf8.ValidString(err.Error()) && utf8.ValidString(name+parts+rf+configs) {
			t.Fatalf("message not UTF-8: %q", err.Error())
		}
		if keys, err := parseDeleteKeys(deletes); err == nil && len(keys) > maxConfigLines {
			t.Fatalf("%d keys", len(keys))
		}
		if id, err := parseBrokerID(broker); err == nil && id < 0 {
			t.Fatalf("broker id %d", id)
		}
	})
}
