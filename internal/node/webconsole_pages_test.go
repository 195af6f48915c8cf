package node

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The web console's cluster pages against a real node: the overview, the
// brokers, a topic created, altered and deleted through the forms, with
// Kafka's own refusals shown and writes without the CSRF token refused.
func TestWebConsoleClusterPages(t *testing.T) {
	plain, base := consoleNode(t, nil)
	b := newBrowser(t, base)
	adm, _ := newAdmin(t, plain)

	code, body := b.get("/")
	if code != http.StatusOK {
		t.Fatalf("overview: %d\n%s", code, body)
	}
	mustContain(t, "overview", body, `id="controller-id">1<`, `id="cluster-id"`, `id="quorum-table"`, `class="voter" data-node="1"`,
		`id="features-table"`, "metadata.version", `id="throughput-chart"`, `id="lag-chart"`, "Kafka protocol of Apache Kafka")

	code, body = b.get("/brokers")
	if code != http.StatusOK {
		t.Fatalf("brokers: %d\n%s", code, body)
	}
	mustContain(t, "brokers", body, `id="broker-1"`, `class="logdir"`, `<span class="badge">controller</span>`)
	code, body = b.get("/brokers/1")
	if code != http.StatusOK {
		t.Fatalf("broker 1: %d\n%s", code, body)
	}
	mustContain(t, "broker 1", body, `id="configs-table"`, `data-config="num.partitions"`)
	if code, body = b.get("/brokers/7"); code != http.StatusNotFound || !strings.Contains(body, "no broker 7") {
		t.Fatalf("unknown broker: %d\n%s", code, body)
	}

	_, body = b.get("/topics")
	token := csrf(t, body)

	// A write without the token is refused and changes nothing.
	code, body, _ = b.post("/topics", url.Values{"name": {"orders"}, "partitions": {"3"}})
	if code != http.StatusForbidden || !strings.Contains(body, "CSRF token") {
		t.Fatalf("create without CSRF: %d\n%s", code, body)
	}
	if code, _ = b.get("/topics/orders"); code != http.StatusNotFound {
		t.Fatalf("a topic was created without the CSRF token: %d", code)
	}

	code, body, loc := b.post("/topics", url.Values{"csrf_token": {token}, "name": {"orders"}, "partitions": {"3"},
		"configs": {"cleanup.policy=compact"}})
	if code != http.StatusSeeOther || loc != "/topics/orders?created=1" {
		t.Fatalf("create: %d %q\n%s", code, loc, body)
	}
	code, body = b.get("/topics/orders?created=1")
	if code != http.StatusOK {
		t.Fatalf("topic page: %d\n%s", code, body)
	}
	mustContain(t, "topic page", body, `id="topic-created"`, `data-partition="2"`, `class="num end-offset">0<`,
		`data-config="cleanup.policy"`, "compact")
	md, err := adm.Metadata(context.Background(), "orders")
	if err != nil {
		t.Fatal(err)
	}
	// The topic id as Kafka's tools print it: URL-safe base64, no padding.
	id := md.Topics["orders"].ID
	mustContain(t, "topic page", body, `id="topic-id">`+base64.RawURLEncoding.EncodeToString(id[:])+`<`)
	code, body = b.get("/topics")
	mustContain(t, "topics", body, `data-topic="orders"`, `class="num partitions">3<`)
	if _, body = b.get("/topics?q=zzz"); strings.Contains(body, `data-topic="orders"`) {
		t.Fatalf("a filter that matches nothing listed orders:\n%s", body)
	}

	// Kafka's refusals come back in Kafka's words, as a 400.
	code, body, _ = b.post("/topics", url.Values{"csrf_token": {token}, "name": {"orders"}})
	if code != http.StatusBadRequest || !strings.Contains(body, "TOPIC_ALREADY_EXISTS") {
		t.Fatalf("create twice: %d\n%s", code, body)
	}
	code, body, _ = b.post("/topics", url.Values{"csrf_token": {token}, "name": {"bad"}, "partitions": {"-3"}})
	if code != http.StatusBadRequest || !strings.Contains(body, "Partitions must be a whole number") {
		t.Fatalf("negative partitions: %d\n%s", code, body)
	}
	code, body, _ = b.post("/topics/orders/configs", url.Values{"csrf_token": {token}, "set": {"retention.ms=soon"}})
	if code != http.StatusBadRequest || !strings.Contains(body, "INVALID_CONFIG") {
		t.Fatalf("bad config value: %d\n%s", code, body)
	}
	code, body, loc = b.post("/topics/orders/configs", url.Values{"csrf_token": {token}, "set": {"retention.ms=3600000"}})
	if code != http.StatusSeeOther {
		t.Fatalf("alter configs: %d\n%s", code, body)
	}
	_, body = b.get(loc)
	mustContain(t, "altered topic", body, `id="configs-altered"`, "3600000", "DYNAMIC_TOPIC_CONFIG")

	code, body = b.get("/topics/orders/delete")
	mustContain(t, "delete confirmation", body, `id="delete-topic-form"`)
	code, body, _ = b.post("/topics/orders/delete", url.Values{"csrf_token": {token}, "confirm": {"order"}})
	if code != http.StatusBadRequest || !strings.Contains(body, "type its name exactly") {
		t.Fatalf("delete without confirmation: %d\n%s", code, body)
	}
	code, body, _ = b.post("/topics/orders/delete", url.Values{"csrf_token": {token}, "confirm": {"orders"}})
	if code != http.StatusSeeOther {
		t.Fatalf("delete: %d\n%s", code, body)
	}
	if code, body = b.get("/topics"); strings.Contains(body, `data-topic="orders"`) {
		t.Fatalf("deleted topic still listed:\n%s", body)
	}
}

// In read-only mode every write is refused with a page saying so, and the
// forms are not offered.
func TestWebConsoleReadOnly(t *testing.T) {
	_, base := consoleNode(t, map[string]string{"sluice.console.read.only": "true"})
	b := newBrowser(t, base)
	code, body := b.get("/topics")
	if code != http.StatusOK || strings.Contains(body, `id="create-topic-form"`) || !strings.Contains(body, `id="read-only"`) {
		t.Fatalf("topics in read-only mode: %d\n%s", code, body)
	}
	code, body, _ = b.post("/topics", url.Values{"name": {"orders"}})
	if code != http.StatusForbidden || !strings.Contains(body, "read-only (sluice.console.read.only=true)") {
		t.Fatalf("create in read-only mode: %d\n%s", code, body)
	}
	if code, _ = b.get("/topics/orders"); code != http.StatusNotFound {
		t.Fatalf("read-only console created a topic: %d", code)
	}
	// On loopback the console answers only loopback names (DNS rebinding).
	req, err := http.NewRequest(http.MethodGet, base+"/topics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "rebound.example"
	resp, err := b.cl.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if code, body = status(t, resp); code != http.StatusMisdirectedRequest || !strings.Contains(body, "listens on loopback") {
		t.Fatalf("Host rebound.example: %d\n%s", code, body)
	}
}
