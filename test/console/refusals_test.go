package console

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"
)

// testCSRF posts the produce form without its CSRF token, and with a
// forged one: both are refused with a message saying why, and nothing is
// written.
func testCSRF(t *testing.T, b *browser, s *consoleServer) {
	before := endOffsets(t, s.admin(t), ordersTopic)
	for _, c := range []struct{ name, token string }{
		{"no token", ""},
		{"forged token", "forged-" + strings.Repeat("0", 32)},
	} {
		b.open(s.url + "/produce?topic=" + ordersTopic)
		if c.token == "" {
			b.must("drop the token", evalVoid(`document.querySelectorAll("#produce-form input[name=csrf_token]").forEach(e => e.remove())`))
		} else {
			b.must("forge the token", evalVoid(fmt.Sprintf(`document.querySelector("#produce-form input[name=csrf_token]").value = %q`, c.token)))
		}
		b.typeIn("produce form", map[string]string{"#produce-partition-input": "0", "#produce-value": "must not be written"})
		status := b.click("#produce-submit")
		b.screenshot("refused-csrf-" + shotName(c.name))
		if status != 403 {
			t.Errorf("%s: the post answered %d, want 403", c.name, status)
		}
		if text := b.bodyText(); !strings.Contains(text, "CSRF") {
			t.Errorf("%s: the page does not say the CSRF token was missing: %q", c.name, firstLine(text))
		}
		b.checkNoStack(c.name)
		b.checkClean(c.name)
	}
	after := endOffsets(t, s.admin(t), ordersTopic)
	b0, _ := before.Lookup(ordersTopic, 0)
	if a0, _ := after.Lookup(ordersTopic, 0); a0.Offset != b0.Offset {
		t.Errorf("a refused post wrote: %s-0 end offset %d -> %d", ordersTopic, b0.Offset, a0.Offset)
	}
}

// badInput is a message browser URL a person might type, and what its
// page must say.
type badInput struct {
	name  string
	query url.Values
	// status is the page's status: any 4xx when 400, else exactly.
	status int64
	// says are substrings the page must show (case-insensitive).
	says []string
}

var badInputs = []badInput{
	{"offset past the end", url.Values{"topic": {ordersTopic}, "partition": {"0"}, "offset": {"1000000"}}, 400, []string{"10"}},
	{"negative partition", url.Values{"topic": {ordersTopic}, "partition": {"-1"}}, 400, []string{"negative"}},
	{"unknown partition", url.Values{"topic": {ordersTopic}, "partition": {"99"}}, 400, []string{"99"}},
	{"unknown topic", url.Values{"topic": {"no-such-topic"}}, 400, []string{"no-such-topic"}},
	{"huge limit", url.Values{"topic": {ordersTopic}, "limit": {"100000000"}}, 200, []string{"500"}},
	{"huge scan", url.Values{"topic": {ordersTopic}, "q": {"x"}, "scan": {"1000000000"}}, 200, []string{"100000"}},
	{"malformed timestamp", url.Values{"topic": {ordersTopic}, "mode": {"timestamp"}, "ts": {"yesterday at noon"}}, 400, []string{"timestamp"}},
	{"offset not a number", url.Values{"topic": {ordersTopic}, "offset": {"12abc"}}, 400, []string{"offset"}},
	{"unknown mode", url.Values{"topic": {ordersTopic}, "mode": {"sideways"}}, 400, []string{"mode"}},
}

// testBadInput opens the message browser with each bad input: a clear
// message, the right status, never a 5xx or a stack; then a value that is
// not UTF-8 is shown escaped, its markup inert.
func testBadInput(t *testing.T, b *browser, s *consoleServer) {
	for _, c := range badInputs {
		t.Run(shotName(c.name), func(t *testing.T) {
			b := b.in(t)
			status := b.open(s.url + "/messages?" + c.query.Encode())
			b.screenshot("bad-" + shotName(c.name))
			switch {
			case c.status == 400 && (status < 400 || status >= 500):
				t.Errorf("answered %d, want a 4xx", status)
			case c.status != 400 && status != c.status:
				t.Errorf("answered %d, want %d", status, c.status)
			}
			text := b.text("#main")
			for _, want := range c.says {
				if !strings.Contains(strings.ToLower(text), strings.ToLower(want)) {
					t.Errorf("the page does not say %q: %q", want, text)
				}
			}
			b.checkNoStack(c.name)
			b.checkClean(c.name)
		})
	}
	t.Run("not-UTF-8", func(t *testing.T) { testNotUTF8(t, b.in(t), s) })
}

// testNotUTF8 shows the record whose value is not UTF-8 and holds "<b>".
func testNotUTF8(t *testing.T, b *browser, s *consoleServer) {
	for _, render := range []string{"text", "json", "hex"} {
		status := b.open(s.url + "/messages?topic=" + binaryTopic + "&render=" + render)
		b.screenshot("bad-not-utf8-" + render)
		if status != 200 {
			t.Errorf("render=%s answered %d", render, status)
		}
		b.checkClean("not UTF-8, " + render)
		b.checkNoStack("not UTF-8, " + render)
		if n := b.count("#browse-records tr.record"); n != 1 {
			t.Errorf("render=%s: %d records shown, want 1", render, n)
			continue
		}
		if n := b.count("#browse-records td.value b"); n != 0 {
			t.Errorf("render=%s: the value's <b> became markup", render)
		}
		value := b.text("#browse-records td.value")
		if strings.ContainsRune(value, '\uFFFD') {
			t.Errorf("render=%s: the value shows replacement characters (bytes lost): %q", render, value)
		}
		if render == "hex" && !strings.Contains(strings.ToLower(strings.ReplaceAll(value, " ", "")), "fffe00") {
			t.Errorf("render=hex: value %q, want the bytes ff fe 00", value)
		}
	}
}

// testReadOnly restarts the server in read-only mode: pages load, the
// write forms are gone or disabled, and a write posted anyway is refused
// with a message, changing nothing.
func testReadOnly(t *testing.T, b *browser, s *consoleServer) {
	if err := s.Stop(30 * time.Second); err != nil {
		t.Fatalf("stop: %v", err)
	}
	s = startConsoleServer(t, s.dataDir, s.ports, "sluice.console.read.only=true")
	adm := s.admin(t)
	beforeEnd := endOffsets(t, adm, ordersTopic)
	beforeCommit := committed(t, adm, billingGroup, ordersTopic, 0)

	if status := b.open(s.url + "/"); status != 200 {
		t.Fatalf("overview in read-only mode answered %d", status)
	}
	b.screenshot("readonly-overview")
	if !b.has("#read-only") {
		t.Errorf("no read-only badge on the overview")
	}
	b.checkClean("read-only overview")

	b.open(s.url + "/topics")
	if b.has("#create-topic-form") {
		t.Errorf("read-only: the topics page still has the create form")
	}
	b.open(s.url + "/produce?topic=" + ordersTopic)
	if !eval[bool](b, `document.querySelector("#produce-submit").disabled`) {
		t.Errorf("read-only: the produce button is enabled")
	}

	for _, w := range []struct {
		name, action string
		fields       map[string]string
	}{
		{"create topic", "/topics", map[string]string{"name": "read-only-topic", "partitions": "1"}},
		{"produce", "/produce", map[string]string{"topic": ordersTopic, "partition": "0", "value": "must not be written"}},
		{"reset offsets", "/groups/" + billingGroup + "/reset", map[string]string{"target": "earliest", "topic": ordersTopic}},
		{"delete topic", "/topics/" + ordersTopic + "/delete", map[string]string{}},
	} {
		status := b.post(w.action, w.fields)
		b.screenshot("readonly-refused-" + shotName(w.name))
		if status != 403 {
			t.Errorf("read-only %s: answered %d, want 403", w.name, status)
		}
		if text := b.text("#main"); !strings.Contains(text, "read-only") {
			t.Errorf("read-only %s: the page does not say why: %q", w.name, text)
		}
		b.checkNoStack("read-only " + w.name)
		b.checkClean("read-only " + w.name)
	}

	if topicExists(t, adm, "read-only-topic") {
		t.Errorf("read-only: the topic was created")
	}
	afterEnd := endOffsets(t, adm, ordersTopic)
	for p := range int32(3) {
		o1, _ := beforeEnd.Lookup(ordersTopic, p)
		o2, _ := afterEnd.Lookup(ordersTopic, p)
		if o1.Offset != o2.Offset {
			t.Errorf("read-only: %s-%d end offset %d -> %d", ordersTopic, p, o1.Offset, o2.Offset)
		}
	}
	if got := committed(t, adm, billingGroup, ordersTopic, 0); got != beforeCommit {
		t.Errorf("read-only: the reset moved %s-0 from %d to %d", ordersTopic, beforeCommit, got)
	}
}
