package config

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
)

// TestGroupConfigsGolden runs testdata/group_configs: "validate" checks a
// group's whole override set (one key=value a line) against a broker with
// the command's arguments as overrides, printing ok or Kafka's message;
// "describe" prints DescribeGroup's entries; "resolve" the typed settings.
// The messages are Kafka 4.4.0's answers to the same sets (bench/kafka-ref).
func TestGroupConfigsGolden(t *testing.T) {
	datadriven.RunTest(t, "testdata/group_configs", func(t *testing.T, d *datadriven.TestData) string {
		broker := Defaults()
		if len(d.CmdArgs) > 0 {
			overrides := map[string]string{}
			for _, a := range d.CmdArgs {
				overrides[a.Key] = strings.Join(a.Vals, ",")
			}
			var err error
			broker, err = Parse("", overrides)
			if err != nil {
				t.Fatalf("broker overrides: %v", err)
			}
		}
		set := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				set[k] = v
			}
		}
		switch d.Cmd {
		case "validate":
			if err := broker.ValidateGroupConfigs(set); err != nil {
				return err.Error() + "\n"
			}
			return "ok\n"
		case "describe":
			var b strings.Builder
			for _, e := range broker.DescribeGroup(set, nil) {
				fmt.Fprintf(&b, "%s=%s %v", e.Name, *e.Value, e.Source)
				for _, s := range e.Synonyms {
					fmt.Fprintf(&b, " [%s=%s %v]", s.Name, *s.Value, s.Source)
				}
				b.WriteString("\n")
			}
			return b.String()
		case "resolve":
			g := broker.GroupSettings(set)
			return fmt.Sprintf("consumer session %v heartbeat %v\nshare session %v heartbeat %v lock %v deliveries %d locks %d\n"+
				"reset %+v read_committed %v renew %v\n",
				g.ConsumerSessionTimeout(), g.ConsumerHeartbeatInterval(), g.ShareSessionTimeout(), g.ShareHeartbeatInterval(),
				g.ShareRecordLockDuration(), g.ShareDeliveryCountLimit(), g.SharePartitionMaxRecordLocks(),
				g.ShareAutoOffsetReset(), g.ShareReadCommitted(), g.ShareRenewAcknowledgeEnable())
		}
		t.Fatalf("unknown command %s", d.Cmd)
		return ""
	})
}

func TestShareAutoOffsetResetDurations(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"by_duration:PT1H": time.Hour, "by_duration:P1D": 24 * time.Hour, "by_duration:PT0.5S": 500 * time.Millisecond,
		"by_duration:P1DT2H3M4S": 26*time.Hour + 3*time.Minute + 4*time.Second, "by_duration:pt1m": time.Minute,
		"by_duration:PT0S": 0,
	} {
		r, err := ParseShareAutoOffsetReset(in)
		if err != nil || r.Strategy != ResetByDuration || r.Duration != want {
			t.Errorf("%s: %+v %v, want %v", in, r, err, want)
		}
	}
	for _, in := range []string{"by_duration:", "by_duration:P", "by_duration:PT", "by_duration:-PT1H", "by_duration:PT-1H", "by_duration:1H",
		"BY_DURATION:PT1H", "Earliest", "none", ""} {
		if r, err := ParseShareAutoOffsetReset(in); err == nil {
			t.Errorf("%q accepted as %+v", in, r)
		}
	}
}
