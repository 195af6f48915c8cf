package console

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// actionTimeout bounds one browser step (a navigation, a form post).
const actionTimeout = 30 * time.Second

// findChromium is Debian's chromium (or another Chromium on PATH).
func findChromium() (string, error) {
	if p := os.Getenv("SLUICE_CHROMIUM"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("console tests: no chromium on PATH; `make console-test` installs it (test/console/setup.sh), or set SLUICE_CHROMIUM")
}

// browser is one headless Chromium tab. Every script exception, console
// error, error log entry and 5xx response (any 4xx of a page's asset too)
// is kept as a problem; checkClean reports them.
type browser struct {
	t   *testing.T
	ctx context.Context

	mu       sync.Mutex
	problems []string
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath),
		chromedp.DisableGPU,
		chromedp.WindowSize(1280, 900),
		chromedp.UserDataDir(t.TempDir()),
	)
	if os.Geteuid() == 0 {
		// Chromium refuses to run as root with its sandbox (CI runs as root).
		opts = append(opts, chromedp.NoSandbox)
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	b := &browser{t: t}
	ctx, cancelTab := chromedp.NewContext(allocCtx, chromedp.WithListener(b.onEvent))
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
	})
	// The first Do starts the browser and ties it to its context, so it
	// runs on the tab's own context: a derived deadline would end it.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start %s: %v", chromiumPath, err)
	}
	b.ctx = ctx
	return b
}

// onEvent runs in the tab's event loop: it only records.
func (b *browser) onEvent(ev any) {
	switch ev := ev.(type) {
	case *runtime.EventExceptionThrown:
		b.problem("script exception: %s", exceptionText(ev.ExceptionDetails))
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
			b.problem("console.%s: %s", ev.Type, remoteArgs(ev.Args))
		}
	case *cdplog.EventEntryAdded:
		// A failed load is logged by the network source too; the response
		// below judges it (a 4xx page is what a bad-input test expects).
		if ev.Entry.Level == cdplog.EntryLevelError && ev.Entry.Source != cdplog.EntrySourceNetwork {
			b.problem("log error (%s): %s %s", ev.Entry.Source, ev.Entry.Text, ev.Entry.URL)
		}
	case *network.EventResponseReceived:
		status := ev.Response.Status
		switch {
		case status >= 500:
			b.problem("%s %s answered %d", ev.Type, ev.Response.URL, status)
		case status >= 400 && ev.Type != network.ResourceTypeDocument:
			b.problem("%s %s answered %d", ev.Type, ev.Response.URL, status)
		}
	}
}

func (b *browser) problem(format string, args ...any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.problems = append(b.problems, fmt.Sprintf(format, args...))
}

// takeProblems returns and forgets the problems seen so far.
func (b *browser) takeProblems() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.problems
	b.problems = nil
	return p
}

// checkClean fails the test with every problem seen since the last check;
// what names the page.
func (b *browser) checkClean(what string) {
	b.t.Helper()
	for _, p := range b.takeProblems() {
		b.t.Errorf("%s: %s", what, p)
	}
}

func exceptionText(d *runtime.ExceptionDetails) string {
	if d == nil {
		return "(no details)"
	}
	text := d.Text
	if d.Exception != nil && d.Exception.Description != "" {
		text += " " + d.Exception.Description
	}
	return fmt.Sprintf("%s at %s:%d:%d", text, d.URL, d.LineNumber+1, d.ColumnNumber+1)
}

func remoteArgs(args []*runtime.RemoteObject) string {
	parts := make([]string, 0, len(args))
	for _, a := range args {
		switch {
		case len(a.Value) > 0:
			parts = append(parts, string(a.Value))
		case a.Description != "":
			parts = append(parts, a.Description)
		default:
			parts = append(parts, string(a.Type))
		}
	}
	return strings.Join(parts, " ")
}

// step runs actions with a deadline.
func (b *browser) step(actions ...chromedp.Action[chromedp.Void]) error {
	ctx, cancel := context.WithTimeout(b.ctx, actionTimeout)
	defer cancel()
	return chromedp.Do(ctx, actions...)
}

// must runs actions and fails the test on an error.
func (b *browser) must(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := b.step(actions...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// open navigates to url and returns the document's HTTP status.
func (b *browser) open(url string) int64 {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, actionTimeout)
	defer cancel()
	resp, err := chromedp.Run(ctx, chromedp.NavigateResponse(url))
	if err != nil {
		b.t.Fatalf("open %s: %v", url, err)
	}
	return resp.Status
}

// submit runs actions that post a form (a click on its button) and returns
// the status of the page the browser lands on.
func (b *browser) submit(what string, actions ...chromedp.Action[chromedp.Void]) int64 {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, actionTimeout)
	defer cancel()
	resp, err := chromedp.RunResponse(ctx, actions...)
	if err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
	return resp.Status
}

// text is the visible text of the first element sel matches.
func (b *browser) text(sel string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, actionTimeout)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

// bodyText is the page's whole visible text.
func (b *browser) bodyText() string {
	b.t.Helper()
	return b.text("body")
}

// eval evaluates a script expression in the page.
func eval[T any](b *browser, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, actionTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// count is how many elements sel matches (no wait).
func (b *browser) count(sel string) int {
	b.t.Helper()
	return eval[int](b, fmt.Sprintf("document.querySelectorAll(%q).length", sel))
}

// stackLike matches what a Go panic or a server stack would print.
var stackLike = regexp.MustCompile(`goroutine \d+ \[|panic:|runtime error|\.go:\d+`)

// checkNoStack fails when the page shows something like a stack trace.
func (b *browser) checkNoStack(what string) {
	b.t.Helper()
	if m := stackLike.FindString(b.bodyText()); m != "" {
		b.t.Errorf("%s: the page shows a stack or a Go error (%q)", what, m)
	}
}

// screenshot saves a full-page PNG named name in the artifacts dir and
// returns its path.
func (b *browser) screenshot(name string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, actionTimeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(artifactsDir(b.t), name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatalf("save screenshot: %v", err)
	}
	return path
}

// artifactsDir is $SLUICE_ARTIFACTS or test/console/artifacts, created.
func artifactsDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("SLUICE_ARTIFACTS")
	if dir == "" {
		dir = "artifacts"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("artifacts dir: %v", err)
	}
	return dir
}
