package config

import (
	"strings"
	"testing"
	"time"
)

// TestShareGroupsDefaults: Kafka 4.4's defaults of the keys share groups
// use.
func TestShareGroupsDefaults(t *testing.T) {
	c, err := Parse("", nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.ShareGroups()
	if err != nil {
		t.Fatal(err)
	}
	want := ShareGroupSettings{SessionTimeout: 45 * time.Second, HeartbeatInterval: 5 * time.Second, MaxSize: 200,
		InitializeRetryInterval: 30 * time.Second, AssignmentInterval: time.Second}
	if s != want {
		t.Fatalf("got %+v, want %+v", s, want)
	}
}

// TestShareGroupsChecks: the start-up checks Kafka makes, with its
// messages.
func TestShareGroupsChecks(t *testing.T) {
	cases := []struct{ props, want string }{
		{"group.share.heartbeat.interval.ms=4000\n", "group.share.heartbeat.interval.ms must be greater than or equal to group.share.min.heartbeat.interval.ms"},
		{"group.share.heartbeat.interval.ms=16000\n", "group.share.heartbeat.interval.ms must be less than or equal to group.share.max.heartbeat.interval.ms"},
		{"group.share.session.timeout.ms=61000\n", "group.share.session.timeout.ms must be less than or equal to group.share.max.session.timeout.ms"},
		{"group.share.min.session.timeout.ms=5000\ngroup.share.session.timeout.ms=5000\n", "group.share.heartbeat.interval.ms must be less than group.share.session.timeout.ms"},
		{"group.share.assignors=simple,other\n", "group.share.assignors must contain exactly one assignor, but found 2"},
		{"group.share.assignors=com.example.Mine\n", "only Kafka's built-in simple assignor"},
		{"group.share.assignment.interval.ms=16000\n", "group.share.assignment.interval.ms must be less than or equal to group.share.max.assignment.interval.ms"},
	}
	for _, tc := range cases {
		c, err := Parse(tc.props, nil)
		if err != nil {
			t.Fatalf("%q: %v", tc.props, err)
		}
		if _, err := c.ShareGroups(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.props, err, tc.want)
		}
	}
	c, err := Parse("group.share.max.size=3\ngroup.share.session.timeout.ms=50000\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if s, err := c.ShareGroups(); err != nil || s.MaxSize != 3 || s.SessionTimeout != 50*time.Second {
		t.Fatalf("%+v %v", s, err)
	}
}
