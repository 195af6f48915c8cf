package node

import (
	"strings"
	"testing"

	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/coordinator/group"
)

func TestConsumerGroupConfig(t *testing.T) {
	parse := func(text string) *config.Config {
		t.Helper()
		c, err := config.Parse(text, nil)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	var cfg group.Config
	c := parse("group.consumer.assignors=org.apache.kafka.coordinator.group.assignor.RangeAssignor,uniform\n")
	if err := consumerGroupConfig(c, &cfg); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cfg.AssignorNames(), ","); got != "range,uniform" {
		t.Errorf("assignors %s, want range,uniform (class names accepted, order kept)", got)
	}
	for text, want := range map[string]string{
		"group.consumer.assignors=sticky\n": `"sticky" is not a server-side assignor`,
		"group.consumer.heartbeat.interval.ms=45000\ngroup.consumer.max.heartbeat.interval.ms=60000\n": "group.consumer.heartbeat.interval.ms must be less than group.consumer.session.timeout.ms",
		"group.consumer.session.timeout.ms=1000\n":                                                     "group.consumer.session.timeout.ms must be greater than or equal to group.consumer.min.session.timeout.ms",
	} {
		if err := consumerGroupConfig(parse(text), &cfg); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", text, err, want)
		}
	}
}
