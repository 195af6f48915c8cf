package console

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/testutil"
)

// TestBrowserSeesProblems checks the checks: a page that throws, one that
// logs console.error, a 500 and a page with a missing script are each
// reported, and a plain page is not. Without it a console test that saw
// nothing could mean a blind browser.
func TestBrowserSeesProblems(t *testing.T) {
	mux := http.NewServeMux()
	page := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, "<!doctype html><html><head><title>t</title></head><body>%s</body></html>", body)
		}
	}
	mux.HandleFunc("/clean", page("<p id=p>fine</p>"))
	mux.HandleFunc("/throws", page("<script>throw new Error('boom')</script>"))
	mux.HandleFunc("/logs", page("<script>console.error('bad thing')</script>"))
	mux.HandleFunc("/missing", page("<script src=/nope.js></script>"))
	mux.HandleFunc("/fails", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "panic: x\ngoroutine 1 [running]:", http.StatusInternalServerError)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	b := newBrowser(t)
	if status := b.open(srv.URL + "/clean"); status != 200 {
		t.Fatalf("/clean answered %d", status)
	}
	if p := b.takeProblems(); len(p) != 0 {
		t.Errorf("/clean: problems %q", p)
	}
	if got := b.text("#p"); got != "fine" {
		t.Errorf("/clean text %q", got)
	}
	for path, want := range map[string]string{
		"/throws":  "boom",
		"/logs":    "bad thing",
		"/missing": "nope.js answered 404",
		"/fails":   "answered 500",
	} {
		b.open(srv.URL + path)
		// Scripts run before the load event, but an event may still be on
		// its way: wait for it rather than read once.
		var got []string
		testutil.Eventually(t, 10*time.Second, func() bool {
			got = append(got, b.takeProblems()...)
			return strings.Contains(strings.Join(got, "\n"), want)
		}, "%s: a problem with %q (got %q)", path, want, got)
	}
	if !stackLike.MatchString("goroutine 1 [running]:") {
		t.Error("stackLike misses a goroutine header")
	}
}
