package console

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// TestKeysOnOneAddressShareAServer: the metrics and debug keys on one
// address bind it once and serve the union of their sets; a metrics-only
// address serves no pprof; a UI is mounted at "/".
func TestKeysOnOneAddressShareAServer(t *testing.T) {
	ui := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "console page") })
	s := startServer(t, Options{Listeners: []Listener{
		{Key: metricsKey, Address: "127.0.0.1:0", Metrics: true},
		{Key: debugKey, Address: "127.0.0.1:0", Metrics: true, Pprof: true},
		{Key: "sluice.console.listener", Address: "127.0.0.1:0", UI: ui},
	}})
	m, d, c := s.Addr(metricsKey), s.Addr(debugKey), s.Addr("sluice.console.listener")
	if m == nil || m.String() != d.String() || m.String() != c.String() {
		t.Fatalf("three keys on one address bound %v, %v and %v", m, d, c)
	}
	base := "http://" + m.String()
	for path, want := range map[string]string{"/metrics": "go_goroutines", "/debug/pprof/": "heap", "/": "console page", "/topics": "console page", "/readyz": "ready"} {
		if code, body := get(t, base+path); code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("GET %s: %d %.60q, want %q", path, code, body, want)
		}
	}

	only := startServer(t, Options{Listeners: []Listener{{Key: metricsKey, Metrics: true}}})
	base = "http://" + only.Addr(metricsKey).String()
	if code, _ := get(t, base+"/debug/pprof/"); code != http.StatusNotFound {
		t.Errorf("metrics listener serves pprof: %d", code)
	}
	for _, path := range []string{"/metrics", "/healthz", "/readyz"} {
		if code, _ := get(t, base+path); code != http.StatusOK {
			t.Errorf("metrics listener GET %s: %d", path, code)
		}
	}
}

// TestSharedAddressNeedsTheSameUsers: two keys serving /metrics on one
// address with different users would leave one set of users bypassed.
func TestSharedAddressNeedsTheSameUsers(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	users := BasicAuthUsers{"prom": hash}
	_, err = New(Options{Listeners: []Listener{
		{Key: metricsKey, Address: "127.0.0.1:9999", Metrics: true},
		{Key: debugKey, Address: "127.0.0.1:9999", Metrics: true, Pprof: true, Users: users},
	}})
	if err == nil || !strings.Contains(err.Error(), "sluice.metrics.listener and sluice.debug.listener share 127.0.0.1:9999 and both serve /metrics") {
		t.Fatalf("different users on one address: %v", err)
	}
	if _, err := New(Options{Listeners: []Listener{
		{Key: metricsKey, Address: "127.0.0.1:9999", Metrics: true, Users: users},
		{Key: debugKey, Address: "127.0.0.1:9999", Metrics: true, Pprof: true, Users: users},
	}}); err != nil {
		t.Fatalf("same users on one address: %v", err)
	}
}

// TestReadyzListsUnmetConditions: 503 with a line per unmet condition,
// 200 "ready" once none is left; no credentials needed even with users.
func TestReadyzListsUnmetConditions(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	unmet := make(chan []string, 1)
	unmet <- []string{"not registered with the controller", "metadata not caught up"}
	base := startConsole(t, Options{
		Listeners: []Listener{{Key: metricsKey, Metrics: true, Users: BasicAuthUsers{"prom": hash}}},
		Ready: func() []string {
			u := <-unmet
			unmet <- u
			return u
		},
	})
	code, body := get(t, base+"/readyz")
	if code != http.StatusServiceUnavailable || body != "not registered with the controller\nmetadata not caught up\n" {
		t.Fatalf("unready node: %d %q", code, body)
	}
	<-unmet
	unmet <- nil
	if code, body := get(t, base+"/readyz"); code != http.StatusOK || body != "ready\n" {
		t.Fatalf("ready node: %d %q", code, body)
	}
}

// TestDrainFailsTheProbes: once the node stops, /healthz and /readyz say
// so while requests are still answered.
func TestDrainFailsTheProbes(t *testing.T) {
	s, err := New(Options{Listeners: []Listener{{Key: metricsKey, Address: "127.0.0.1:0", Metrics: true}},
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handler("127.0.0.1:0")
	s.Drain()
	for _, path := range []string{"/healthz", "/readyz"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httpRequest(t, path))
		if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "shutting down") {
			t.Errorf("%s while draining: %d %q", path, rec.Code, rec.Body.String())
		}
	}
	// A failing Healthy is reported too.
	s, err = New(Options{Listeners: []Listener{{Key: metricsKey, Address: "127.0.0.1:0"}},
		Healthy: func() error { return errors.New("metadata quorum failed") }})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	s.Handler("127.0.0.1:0").ServeHTTP(rec, httpRequest(t, "/healthz"))
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "metadata quorum failed") {
		t.Errorf("failing node: %d %q", rec.Code, rec.Body.String())
	}
}

func httpRequest(t *testing.T, path string) *http.Request {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
