package console

import (
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// knownPages are the pages every run must reach: the navigation's and
// the pages of what seed wrote.
var knownPages = []string{
	"/",
	"/brokers",
	"/topics",
	"/topics/" + ordersTopic,
	"/groups",
	"/groups/" + billingGroup,
	"/reassignments",
	"/messages?topic=" + ordersTopic,
	"/produce",
}

// maxCrawl bounds how many pages the crawl visits.
const maxCrawl = 60

// testPages opens the known pages and every console page linked from
// them (breadth first, up to maxCrawl): each answers 200 with no script
// error, console error, failed asset or stack on it, and is saved as a
// screenshot.
func testPages(t *testing.T, b *browser, s *consoleServer) {
	queue := append([]string(nil), knownPages...)
	visited := map[string]bool{}
	for len(queue) > 0 && len(visited) < maxCrawl {
		path := queue[0]
		queue = queue[1:]
		if visited[path] {
			continue
		}
		visited[path] = true
		b.takeProblems() // anything before this page is another page's
		if status := b.open(s.url + path); status != 200 {
			t.Errorf("GET %s answered %d: %s", path, status, firstLine(b.bodyText()))
		}
		b.checkClean(path)
		b.checkNoStack(path)
		b.screenshot("page-" + shotName(path))
		for _, link := range b.links() {
			if p, ok := consolePath(s.url, link); ok && !visited[p] {
				queue = append(queue, p)
			}
		}
	}
	t.Logf("visited %d pages", len(visited))
}

// links are the hrefs of the page's anchors, resolved by the browser.
func (b *browser) links() []string {
	b.t.Helper()
	return eval[[]string](b, `Array.from(document.querySelectorAll("a[href]"), a => a.href)`)
}

// consolePath is link's path and query when it is a console page worth a
// visit: same origin, not a static asset, not a form action.
func consolePath(base, link string) (string, bool) {
	u, err := url.Parse(link)
	if err != nil || !strings.HasPrefix(link, base+"/") {
		return "", false
	}
	if strings.HasPrefix(u.Path, "/static/") || u.Path == "/logout" {
		return "", false
	}
	u.Fragment = ""
	return strings.TrimPrefix(u.String(), base), true
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// shotName turns a console path into a file name: "/" is "overview".
func shotName(path string) string {
	name := strings.Trim(unsafeName.ReplaceAllString(path, "-"), "-")
	if name == "" {
		return "overview"
	}
	if len(name) > 80 {
		name = name[:80]
	}
	return name
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
