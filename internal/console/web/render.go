package web

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

// templates holds the layout and one file per page; a page file defines
// "content" (and may define "head"). static holds the stylesheet.
//
//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// pages are the parsed page templates by file name ("overview.html").
type pages struct{ byName map[string]*template.Template }

// parsePages parses every page file with the layout around it.
func parsePages() (*pages, error) {
	layout, err := template.New("layout.html").Funcs(funcs()).ParseFS(templateFS, "templates/layout.html")
	if err != nil {
		return nil, err
	}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	p := &pages{byName: make(map[string]*template.Template)}
	for _, name := range names {
		base := path.Base(name)
		if base == "layout.html" {
			continue
		}
		t, err := template.Must(layout.Clone()).ParseFS(templateFS, name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", base, err)
		}
		p.byName[base] = t
	}
	return p, nil
}

// view is what the layout renders around a page's data.
type view struct {
	Title    string
	Nav      string // the navigation entry to highlight
	User     string
	CSRF     string
	ReadOnly bool
	Login    bool // login required: show logout
	Data     any
}

// render writes page (a template file name) with data inside the layout.
// The page is rendered to a buffer first, so a template error becomes an
// error page rather than half a page.
func (c *Console) render(w http.ResponseWriter, s *session, status int, page, title string, data any) {
	t := c.pages.byName[page]
	if t == nil {
		c.log.Error("web console: no such page template", "page", page)
		http.Error(w, "internal error: no page "+page, http.StatusInternalServerError)
		return
	}
	v := view{Title: title, Nav: strings.TrimSuffix(page, ".html"), ReadOnly: c.opts.ReadOnly, Login: c.loginRequired(), Data: data}
	if s != nil {
		v.User, v.CSRF = s.user, s.csrf
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout.html", v); err != nil {
		c.log.Error("web console: render", "page", page, "err", err)
		http.Error(w, "internal error rendering "+page, http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// httpError is an error with the status and the message a user sees.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

// userError is a 4xx page with a message (bad input, refused action).
func userError(status int, format string, args ...any) error {
	return &httpError{status: status, msg: fmt.Sprintf(format, args...)}
}

// badRequest is a 400 page saying what was wrong with the input.
func badRequest(format string, args ...any) error {
	return userError(http.StatusBadRequest, format, args...)
}

// errorData is the error page's content.
type errorData struct {
	Status  int
	Message string
}

// renderError shows err on the error page: an httpError with its status,
// anything else (a Kafka or network error) as 502 with its text, since the
// console is a client and the failure is the cluster's answer. Never a
// stack.
func (c *Console) renderError(w http.ResponseWriter, s *session, err error) {
	status, msg := http.StatusBadGateway, "the cluster answered: "+err.Error()
	var he *httpError
	if errors.As(err, &he) {
		status, msg = he.status, he.msg
	} else {
		c.log.Warn("web console: request failed", "err", err)
	}
	c.render(w, s, status, "error.html", http.StatusText(status), errorData{Status: status, Message: msg})
}
