package web

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/clock"
)

// newTestConsole builds a console whose bootstrap address nothing serves:
// enough for the framework's own routes, which make no Kafka request.
func newTestConsole(t *testing.T, opts Options) *Console {
	t.Helper()
	if opts.Bootstrap == "" {
		opts.Bootstrap = "127.0.0.1:1"
	}
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func do(t *testing.T, h http.Handler, method, target string, form url.Values, cookies ...*http.Cookie) *http.Response {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req := httptest.NewRequest(method, target, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for _, ck := range cookies {
		req.AddCookie(ck)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func readBody(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestStaticAndNotFound(t *testing.T) {
	c := newTestConsole(t, Options{})
	resp := do(t, c.Handler(), "GET", "/static/console.css", nil)
	if resp.StatusCode != 200 || !strings.Contains(readBody(t, resp), "Sluice web console") {
		t.Fatalf("static: %d", resp.StatusCode)
	}
	resp = do(t, c.Handler(), "GET", "/no/such/page", nil)
	if body := readBody(t, resp); resp.StatusCode != 404 || !strings.Contains(body, "No page at /no/such/page") {
		t.Fatalf("not found: %d %s", resp.StatusCode, body)
	}
	for _, p := range []string{"/metrics", "/healthz", "/readyz", "/debug/pprof/"} {
		if resp := do(t, c.Handler(), "GET", p, nil); resp.StatusCode != 404 {
			t.Errorf("%s: %d, want the console to leave it to the metrics listener", p, resp.StatusCode)
		}
	}
}

func TestLoginRequiredRedirectsAndRefusesPostsWithoutSession(t *testing.T) {
	c := newTestConsole(t, Options{SASLMechanisms: []string{"SCRAM-SHA-512"}})
	resp := do(t, c.Handler(), "GET", "/?x=1", nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login?next=%2F%3Fx%3D1" {
		t.Fatalf("GET without login: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp = do(t, c.Handler(), "GET", "/login", nil)
	body := readBody(t, resp)
	if resp.StatusCode != 200 || !strings.Contains(body, `id="login-form"`) {
		t.Fatalf("login page: %d", resp.StatusCode)
	}
	cookies := resp.Cookies()
	if len(cookies) != 1 || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("login cookie: %+v", cookies)
	}
	// The login form posted without its token is refused before any
	// Kafka connection is tried.
	resp = do(t, c.Handler(), "POST", "/login", url.Values{"username": {"u"}, "password": {"p"}}, cookies[0])
	if body := readBody(t, resp); resp.StatusCode != 403 || !strings.Contains(body, "CSRF") {
		t.Fatalf("login without CSRF: %d %s", resp.StatusCode, body)
	}
}

func TestLogoutWithoutCSRFIsRefused(t *testing.T) {
	c := newTestConsole(t, Options{SASLMechanisms: []string{"PLAIN"}})
	s := c.sessions.create("alice", nil, false)
	ck := &http.Cookie{Name: cookieName, Value: s.id}
	resp := do(t, c.Handler(), "POST", "/logout", url.Values{csrfField: {"wrong"}}, ck)
	if body := readBody(t, resp); resp.StatusCode != 403 || !strings.Contains(body, "CSRF") {
		t.Fatalf("logout with a wrong token: %d %s", resp.StatusCode, body)
	}
	resp = do(t, c.Handler(), "POST", "/logout", url.Values{csrfField: {s.csrf}}, ck)
	if resp.StatusCode != http.StatusSeeOther || c.sessions.get(s.id) != nil {
		t.Fatalf("logout: %d, session left: %v", resp.StatusCode, c.sessions.get(s.id) != nil)
	}
}

func TestSessionsExpireAndStayBounded(t *testing.T) {
	clk := clock.NewManual(time.Unix(1000, 0))
	ss := newSessions(clk, time.Minute, 3)
	a := ss.create("", nil, false)
	clk.Advance(30 * time.Second)
	for range 3 {
		ss.create("", nil, false)
	}
	if len(ss.byID) != 3 || ss.get(a.id) != nil {
		t.Fatalf("sessions %d, oldest kept: %v", len(ss.byID), ss.get(a.id) != nil)
	}
	b := ss.create("", nil, false)
	clk.Advance(61 * time.Second)
	if ss.get(b.id) != nil {
		t.Fatal("a session outlived its ttl")
	}
}

func TestSafeNext(t *testing.T) {
	for in, want := range map[string]string{
		"/topics?x=1": "/topics?x=1", "": "/", "//evil.example/": "/", "https://evil.example/": "/", "/\\evil": "/",
	} {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLoopbackHostsRefusesOtherNames(t *testing.T) {
	c := newTestConsole(t, Options{LoopbackHosts: true})
	for host, want := range map[string]int{
		"127.0.0.1:9644": 200, "localhost:9644": 200, "[::1]:9644": 200, "LOCALHOST": 200,
		"evil.example:9644": http.StatusMisdirectedRequest, "127.0.0.1.evil.example": http.StatusMisdirectedRequest,
	} {
		req := httptest.NewRequest("GET", "/static/console.css", nil)
		req.Host = host
		rec := httptest.NewRecorder()
		c.Handler().ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("Host %q: %d, want %d", host, rec.Code, want)
		}
	}
}

// After Close no new client is made: a request gets a 503 page, and a
// session created late holds no client.
func TestClosedConsoleMakesNoClients(t *testing.T) {
	c := newTestConsole(t, Options{})
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	resp := do(t, c.Handler(), "GET", "/", nil)
	if body := readBody(t, resp); resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "stopping") {
		t.Fatalf("after Close: %d %s", resp.StatusCode, body)
	}
	if s := c.sessions.create("late", nil, true); s.client != nil || len(c.sessions.byID) != 0 {
		t.Fatal("a session was kept after Close")
	}
}
