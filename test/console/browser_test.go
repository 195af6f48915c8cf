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
	*seen
}

// seen is what the tab's listener recorded, shared by every view of the
// browser (in).
type seen struct {
	mu       sync.Mutex
	problems []string
}

// in is the browser reporting to t (a subtest).
func (b *browser) in(t *testing.T) *browser {
	c := *b
	c.t = t
	return &c
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
	b := &browser{t: t, seen: &seen{}}
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
		case ev.Type == network.ResourceTypeOther && strings.HasSuffix(ev.Response.URL, "/favicon.ico"):
			// The browser asks for it on its own; no page links it.
		case status >= 500:
			b.problem("%s %s answered %d", ev.Type, ev.Response.URL, status)
		case status >= 400 && ev.Type != network.ResourceTypeDocument:
			b.problem("%s %s answered %d", ev.Type, ev.Response.URL, status)
		}
	}
}

func (s *seen) problem(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.problems = append(s.problems, fmt.Sprintf(format, args...))
}

// takeProblems returns and forgets the problems seen so far.
func (s *seen) takeProblems() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.problems
	s.problems = nil
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

// typeIn types text into form fields by CSS selector, as a person does:
// each field is emptied, focused and sent the keys.
func (b *browser) typeIn(what string, fields map[string]string) {
	b.t.Helper()
	actions := make([]chromedp.Action[chromedp.Void], 0, 2*len(fields))
	for sel, v := range fields {
		clear := evalVoid(fmt.Sprintf(`document.querySelector(%q).value = ""`, sel))
		actions = append(actions, clear, chromedp.SendKeys(chromedp.CSS(sel), v))
	}
	b.must(what, actions...)
}

// choose selects value in the select element sel.
func (b *browser) choose(sel, value string) {
	b.t.Helper()
	b.must("choose "+value+" in "+sel, chromedp.SetValue(chromedp.CSS(sel), value))
}

// click clicks sel (a submit button) and returns the status of the page
// the browser lands on.
func (b *browser) click(sel string) int64 {
	b.t.Helper()
	return b.submit("click "+sel, chromedp.Click(chromedp.CSS(sel)))
}

// post builds a form in the page with fields and submits it to action,
// as a page of another origin or a stale tab would; it returns the status
// of the page the browser lands on.
func (b *browser) post(action string, fields map[string]string) int64 {
	b.t.Helper()
	js := fmt.Sprintf(`(() => {
  const f = document.createElement("form");
  f.method = "post";
  f.action = %q;
  for (const [k, v] of Object.entries(%s)) {
    const i = document.createElement("input");
    i.type = "hidden"; i.name = k; i.value = v;
    f.appendChild(i);
  }
  document.body.appendChild(f);
  f.submit();
})()`, action, jsObject(fields))
	return b.submit("post "+action, chromedp.Evaluate[chromedp.Void](js))
}

// jsObject is fields as a JavaScript object literal.
func jsObject(fields map[string]string) string {
	parts := make([]string, 0, len(fields))
	for k, v := range fields {
		parts = append(parts, fmt.Sprintf("%q: %q", k, v))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// texts are the visible texts of every element sel matches.
func (b *browser) texts(sel string) []string {
	b.t.Helper()
	return eval[[]string](b, fmt.Sprintf(`Array.from(document.querySelectorAll(%q), e => e.innerText.trim())`, sel))
}

// has reports whether sel matches an element.
func (b *browser) has(sel string) bool {
	b.t.Helper()
	return b.count(sel) > 0
}

// evalVoid is a script run in the page for its effect.
func evalVoid(js string) chromedp.Action[chromedp.Void] { return chromedp.Evaluate[chromedp.Void](js) }
