package web

import (
	"crypto/rand"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

var csrfInput = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// formSession opens a session on page and returns its cookies and the
// CSRF token of the page's form.
func formSession(t *testing.T, h http.Handler, page string) ([]*http.Cookie, string) {
	t.Helper()
	resp := do(t, h, "GET", page, nil)
	body := readBody(t, resp)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: status %d:\n%s", page, resp.StatusCode, body)
	}
	m := csrfInput.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("%s has no CSRF token:\n%s", page, body)
	}
	return resp.Cookies(), m[1]
}

// post submits form with the session's cookies.
func post(t *testing.T, h http.Handler, target string, form url.Values, cookies []*http.Cookie) (int, string) {
	t.Helper()
	resp := do(t, h, "POST", target, form, cookies...)
	return resp.StatusCode, readBody(t, resp)
}

func TestProduceOnALiveNode(t *testing.T) {
	n := startLiveNode(t)
	n.createTopic(t, "orders", 3)
	h := n.console(t, Options{}).Handler()
	cookies, token := formSession(t, h, "/produce?topic=orders")

	form := url.Values{"topic": {"orders"}, "partition": {"2"}, "key": {"pk-1"}, "value": {"hello <there>"}, "headers": {"source=console\nempty="}}
	if status, body := post(t, h, "/produce", form, cookies); status != http.StatusForbidden || !strings.Contains(body, "CSRF") {
		t.Fatalf("a post without the CSRF token: %d\n%s", status, body)
	}
	form.Set(csrfField, token)
	status, body := post(t, h, "/produce", form, cookies)
	if status != http.StatusOK || !strings.Contains(body, `id="produce-partition">2<`) || !strings.Contains(body, `id="produce-offset">0<`) {
		t.Fatalf("produce: %d\n%s", status, body)
	}
	// The browser finds it by key, with its headers.
	page := mustGet(t, h, "/messages?topic=orders&partition=2&q=pk-1&in=key")
	for _, want := range []string{`data-offset="0"`, "hello &lt;there&gt;", "source", "console", "1 matched"} {
		if !strings.Contains(page, want) {
			t.Errorf("browsing for the produced message: page lacks %q", want)
		}
	}

	// Without a partition the partitioner chooses; the answer names it.
	status, body = post(t, h, "/produce", url.Values{csrfField: {token}, "topic": {"orders"}, "value": {"v"}}, cookies)
	if status != http.StatusOK || !strings.Contains(body, `id="produce-result"`) {
		t.Fatalf("produce without a partition: %d\n%s", status, body)
	}

	// Kafka's own refusal: a record above the topic's max.message.bytes.
	small := "200"
	if _, err := n.adm.CreateTopic(t.Context(), 1, 1, map[string]*string{"max.message.bytes": &small}, "tiny"); err != nil {
		t.Fatal(err)
	}
	var big strings.Builder // random text: the producer's compression cannot shrink it below the limit
	for big.Len() < 2000 {
		big.WriteString(rand.Text())
	}
	status, body = post(t, h, "/produce", url.Values{csrfField: {token}, "topic": {"tiny"}, "value": {big.String()}}, cookies)
	if status != http.StatusBadRequest || !strings.Contains(body, "Kafka refused the message: MESSAGE_TOO_LARGE") {
		t.Fatalf("a record above max.message.bytes: %d\n%s", status, body)
	}

	bad := []struct {
		form   url.Values
		status int
		want   string
	}{
		{url.Values{"topic": {"orders"}, "partition": {"9"}, "value": {"v"}}, http.StatusBadRequest, "has partitions 0 to 2"},
		{url.Values{"topic": {"orders"}, "partition": {"-2"}, "value": {"v"}}, http.StatusBadRequest, "Partition must be"},
		{url.Values{"topic": {"no-such"}, "value": {"v"}}, http.StatusNotFound, "does not exist"},
		{url.Values{"topic": {"orders"}, "headers": {"no equals sign"}}, http.StatusBadRequest, "Header line 1"},
		{url.Values{"value": {"v"}}, http.StatusBadRequest, "Choose the topic"},
	}
	for _, b := range bad {
		b.form.Set(csrfField, token)
		status, body := post(t, h, "/produce", b.form, cookies)
		if status != b.status || !strings.Contains(body, `id="produce-error"`) || !strings.Contains(body, b.want) {
			t.Errorf("%v: %d, want %d with %q:\n%s", b.form, status, b.status, b.want, body)
		}
	}
}

func TestProduceRefusedReadOnly(t *testing.T) {
	n := startLiveNode(t)
	n.createTopic(t, "orders", 1)
	h := n.console(t, Options{ReadOnly: true}).Handler()
	cookies, token := formSession(t, h, "/produce")
	status, body := post(t, h, "/produce", url.Values{csrfField: {token}, "topic": {"orders"}, "value": {"v"}}, cookies)
	if status != http.StatusForbidden || !strings.Contains(body, "read-only") {
		t.Fatalf("read-only produce: %d\n%s", status, body)
	}
	ends, err := n.adm.ListEndOffsets(t.Context(), "orders")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := ends.Lookup("orders", 0); o.Offset != 0 {
		t.Fatalf("a read-only console wrote: end offset %d", o.Offset)
	}
}
