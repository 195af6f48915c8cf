package console

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/sluice-io/sluice/internal/testutil"
)

// testTopicConfigs changes a config of the made topic through its form,
// then asks for a value Kafka refuses: the page shows Kafka's message
// verbatim, as a 4xx, and nothing changes.
func testTopicConfigs(t *testing.T, b *browser, s *consoleServer) {
	adm := s.admin(t)
	b.open(s.url + "/topics/" + madeTopic)
	b.typeIn("configs form", map[string]string{"#alter-configs-set": "retention.ms=3600000"})
	if status := b.click("#alter-configs-submit"); status != 200 {
		t.Fatalf("alter configs answered %d: %s", status, firstLine(b.text("#main")))
	}
	b.screenshot("flow-configs-altered")
	b.checkClean("alter configs")
	if !b.has("#configs-altered") {
		t.Errorf("no notice #configs-altered after the change")
	}
	row := `#configs-table tr.config[data-config="retention.ms"] td.value`
	if got := b.text(row); got != "3600000" {
		t.Errorf("retention.ms shows %q after the change, want 3600000", got)
	}
	if got := topicConfig(t, adm, madeTopic, "retention.ms"); got != "3600000" {
		t.Errorf("the cluster has retention.ms=%s, want 3600000", got)
	}

	// What Kafka says of a bad value, asked directly with validate-only.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	bad := []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "cleanup.policy", Value: ptr("bogus")}}
	resps, err := adm.ValidateAlterTopicConfigs(ctx, bad, madeTopic)
	if err != nil || len(resps) != 1 || resps[0].Err == nil {
		t.Fatalf("validate cleanup.policy=bogus: %v %+v, want Kafka's refusal", err, resps)
	}
	b.open(s.url + "/topics/" + madeTopic)
	b.typeIn("configs form", map[string]string{"#alter-configs-set": "cleanup.policy=bogus"})
	status := b.click("#alter-configs-submit")
	b.screenshot("flow-configs-refused")
	if status < 400 || status >= 500 {
		t.Errorf("a refused config answered %d, want a 4xx", status)
	}
	text := b.text("#main")
	if msg := resps[0].ErrMessage; msg == "" || !strings.Contains(text, msg) {
		t.Errorf("the page does not show Kafka's message %q: %q", msg, text)
	}
	b.checkNoStack("refused config")
	b.checkClean("refused config")
	if got := topicConfig(t, adm, madeTopic, "cleanup.policy"); got != "delete" {
		t.Errorf("cleanup.policy is %q after a refused change, want delete", got)
	}
}

// testDeleteTopic deletes a topic through the confirm page: a wrong name
// typed is refused, the right one deletes it.
func testDeleteTopic(t *testing.T, b *browser, s *consoleServer) {
	const doomed = "doomed"
	adm := s.admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	createTopic(ctx, t, adm, doomed, 1)
	b.open(s.url + "/topics/" + doomed)
	if status := b.click("#delete-topic-link"); status != 200 {
		t.Fatalf("the delete link answered %d", status)
	}
	b.typeIn("confirm", map[string]string{"#delete-topic-confirm": "doome"})
	status := b.click("#delete-topic-submit")
	b.screenshot("flow-delete-unconfirmed")
	if status != 400 || !strings.Contains(b.text("#main"), "type its name") {
		t.Errorf("a wrong confirmation answered %d: %q", status, firstLine(b.text("#main")))
	}
	b.checkClean("unconfirmed delete")
	if !topicExists(t, adm, doomed) {
		t.Fatalf("a wrong confirmation deleted the topic")
	}
	b.open(s.url + "/topics/" + doomed + "/delete")
	b.typeIn("confirm", map[string]string{"#delete-topic-confirm": doomed})
	if status := b.click("#delete-topic-submit"); status != 200 {
		t.Fatalf("the delete answered %d: %s", status, firstLine(b.text("#main")))
	}
	b.screenshot("flow-deleted")
	b.checkClean("delete topic")
	testutil.Eventually(t, 30*time.Second, func() bool { return !topicExists(t, adm, doomed) }, "topic %s gone", doomed)
	if n := b.count(`#topics-table tr.topic[data-topic="` + doomed + `"]`); n != 0 {
		t.Errorf("the topics list after the delete still shows %s", doomed)
	}
}

// topicConfig is the value of a topic config as the cluster describes it.
func topicConfig(t *testing.T, adm *kadm.Client, topic, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	rc, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		t.Fatalf("describe configs of %s: %v", topic, err)
	}
	c, err := rc.On(topic, nil)
	if err != nil {
		t.Fatalf("describe configs of %s: %v", topic, err)
	}
	for _, kv := range c.Configs {
		if kv.Key == name {
			return kv.MaybeValue()
		}
	}
	t.Fatalf("topic %s has no config %s", topic, name)
	return ""
}

func ptr[T any](v T) *T { return &v }
