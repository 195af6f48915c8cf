package web

import (
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// withSession finds the request's session. Without login a new browser
// gets a session (its CSRF token) on its first GET; with login a browser
// without a logged-in session is sent to /login (a POST is refused).
func (c *Console) withSession(h func(http.ResponseWriter, *http.Request, *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s := c.sessions.fromRequest(r)
		if s != nil && s.client != nil {
			h(w, r, s)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			c.renderError(w, s, userError(http.StatusForbidden,
				"This form was posted without a session (the session expired, or cookies are off). Reload the page and try again."))
			return
		}
		if c.loginRequired() {
			http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		cl, err := c.sharedClient()
		if err != nil {
			c.renderError(w, nil, err)
			return
		}
		s = c.sessions.create("", cl, false)
		if s.client == nil { // the console closed meanwhile
			c.renderError(w, nil, errStopped)
			return
		}
		setCookie(w, r, s)
		h(w, r, s)
	}
}

// checkAction refuses a write in read-only mode or without the session's
// CSRF token, after bounding and parsing the form.
func (c *Console) checkAction(w http.ResponseWriter, r *http.Request, s *session) error {
	if c.opts.ReadOnly {
		return userError(http.StatusForbidden,
			"The console is read-only (sluice.console.read.only=true): it makes no changes to the cluster.")
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		return badRequest("The form could not be read: %v", err)
	}
	if !s.checkCSRF(r.PostForm.Get(csrfField)) {
		return userError(http.StatusForbidden,
			"This form was posted without a valid CSRF token, so it was refused. Reload the page and submit it again.")
	}
	return nil
}

// loopbackOnly refuses a request whose Host header is not localhost or a
// loopback address (see Options.LoopbackHosts).
func (c *Console) loopbackOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopbackHost(r.Host) {
			c.renderError(w, nil, userError(http.StatusMisdirectedRequest,
				"This console listens on loopback and answers only requests for localhost or a loopback address, not %q.", clipInput(r.Host)))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// loopbackHost reports whether a Host header names localhost or a
// loopback address, with or without a port.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
