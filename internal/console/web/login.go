package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// loginTimeout bounds the SASL handshake a login waits for.
const loginTimeout = 10 * time.Second

// saslMechanism builds the franz-go mechanism of a Kafka mechanism name.
func saslMechanism(name, user, pass string) (sasl.Mechanism, error) {
	switch strings.ToUpper(name) {
	case "SCRAM-SHA-512":
		return scram.Auth{User: user, Pass: pass}.AsSha512Mechanism(), nil
	case "SCRAM-SHA-256":
		return scram.Auth{User: user, Pass: pass}.AsSha256Mechanism(), nil
	case "PLAIN":
		return plain.Auth{User: user, Pass: pass}.AsMechanism(), nil
	}
	return nil, fmt.Errorf("SASL mechanism %q is not one the console can log in with (SCRAM-SHA-512, SCRAM-SHA-256, PLAIN)", name)
}

type loginData struct {
	Next  string
	Error string
	User  string
}

// loginPage shows the login form; its pre-login session carries the
// form's CSRF token (so a cross-site page cannot log a browser in).
func (c *Console) loginPage(w http.ResponseWriter, r *http.Request) {
	if !c.loginRequired() {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	s := c.sessions.fromRequest(r)
	if s == nil {
		s = c.sessions.create("", nil, false)
		setCookie(w, r, s)
	}
	c.render(w, s, http.StatusOK, "login.html", "Log in", loginData{Next: safeNext(r.URL.Query().Get("next"))})
}

// login checks the user's password by authenticating to the node with
// SASL; on success the browser gets a new session (a new id, so a fixed
// pre-login id is worth nothing) holding that client.
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	s := c.sessions.fromRequest(r)
	if !c.loginRequired() {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	if s == nil {
		c.renderError(w, nil, userError(http.StatusForbidden, "The login form expired. Reload the page and log in again."))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil || !s.checkCSRF(r.PostForm.Get(csrfField)) {
		c.renderError(w, s, userError(http.StatusForbidden, "The login form was posted without a valid CSRF token. Reload the page and log in again."))
		return
	}
	user, pass := r.PostForm.Get("username"), r.PostForm.Get("password")
	next := safeNext(r.PostForm.Get("next"))
	cl, err := c.authenticate(r.Context(), user, pass)
	if err != nil {
		c.log.Info("web console: login refused", "user", user, "err", err)
		c.render(w, s, http.StatusUnauthorized, "login.html", "Log in",
			loginData{Next: next, User: user, Error: "Login failed: " + err.Error()})
		return
	}
	c.sessions.remove(s)
	ns := c.sessions.create(user, cl, true)
	setCookie(w, r, ns)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// authenticate connects as user with each enabled mechanism in turn and
// returns the first client the node accepts.
func (c *Console) authenticate(ctx context.Context, user, pass string) (*kgo.Client, error) {
	if user == "" || pass == "" {
		return nil, errors.New("a user name and a password are required")
	}
	var last error
	for _, name := range c.opts.SASLMechanisms {
		mech, err := saslMechanism(name, user, pass)
		if err != nil {
			return nil, err
		}
		if c.isClosed() {
			return nil, errStopped
		}
		cl, err := c.newClient(kgo.SASL(mech))
		if err != nil {
			return nil, err
		}
		pctx, cancel := context.WithTimeout(ctx, loginTimeout)
		err = cl.Ping(pctx)
		cancel()
		if err == nil {
			return cl, nil
		}
		cl.Close()
		last = fmt.Errorf("%s: %w", name, err)
	}
	return nil, last
}

// logout ends the session and closes its client.
func (c *Console) logout(w http.ResponseWriter, r *http.Request) {
	s := c.sessions.fromRequest(r)
	if s == nil {
		http.Redirect(w, r, "/login", http.StatusSeeOther)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil || !s.checkCSRF(r.PostForm.Get(csrfField)) {
		c.renderError(w, s, userError(http.StatusForbidden, "The logout form was posted without a valid CSRF token."))
		return
	}
	c.sessions.remove(s)
	clearCookie(w)
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// safeNext keeps a post-login redirect on this site: a path, never
// "//host" or a scheme.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
		return "/"
	}
	return next
}
