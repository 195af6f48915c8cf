package node

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/testbin"
)

// consoleNode runs a node with props (listeners and controller voters
// filled in when missing; {ctrl} in a value is the controller port) and
// sluice.console.listener on a free loopback port. plain is the node's
// PLAINTEXT address, consoleURL the console's base URL.
func consoleNode(t *testing.T, props map[string]string) (plain string, consoleURL string) {
	t.Helper()
	ctrl := testbin.FreePort(t)
	all := map[string]string{
		"log.dirs":                 t.TempDir(),
		"listeners":                "PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:" + strconv.Itoa(ctrl),
		"controller.quorum.voters": "1@127.0.0.1:" + strconv.Itoa(ctrl),
		"sluice.console.listener":  "127.0.0.1:0",
	}
	for k, v := range props {
		all[k] = strings.ReplaceAll(v, "{ctrl}", strconv.Itoa(ctrl))
	}
	cfg, err := config.Parse("", all)
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	n, err := New(cfg, logger, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("node stop: %v", err)
		}
	})
	select {
	case <-n.Ready():
	case err := <-done:
		t.Fatalf("node stopped at start: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("node not ready after 20s")
	}
	if n.ConsoleAddr() == "" {
		t.Fatal("sluice.console.listener is set but nothing serves it")
	}
	if a := n.Addr("PLAINTEXT"); a != nil {
		plain = a.String()
	}
	return plain, "http://" + n.ConsoleAddr()
}

// browser is a cookie-keeping HTTP client that does not follow redirects.
type browser struct {
	t    *testing.T
	base string
	cl   *http.Client
}

func newBrowser(t *testing.T, base string) *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &browser{t: t, base: base, cl: &http.Client{
		Jar:           jar,
		Timeout:       30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

func (b *browser) get(path string) (int, string) {
	b.t.Helper()
	resp, err := b.cl.Get(b.base + path)
	if err != nil {
		b.t.Fatal(err)
	}
	return status(b.t, resp)
}

func (b *browser) post(path string, form url.Values) (int, string, string) {
	b.t.Helper()
	resp, err := b.cl.PostForm(b.base+path, form)
	if err != nil {
		b.t.Fatal(err)
	}
	code, body := status(b.t, resp)
	return code, body, resp.Header.Get("Location")
}

func status(t *testing.T, resp *http.Response) (int, string) {
	t.Helper()
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

var csrfPattern = regexp.MustCompile(`name="csrf_token" value="([0-9a-f]{64})"`)

// csrf is the token of the session the page was rendered for.
func csrf(t *testing.T, page string) string {
	t.Helper()
	m := csrfPattern.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF token on the page:\n%s", page)
	}
	return m[1]
}

func mustContain(t *testing.T, what, body string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(body, w) {
			t.Fatalf("%s lacks %q:\n%s", what, w, body)
		}
	}
}
