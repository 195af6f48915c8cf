package web

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/clock"
)

// cookieName is the session cookie.
const cookieName = "sluice_console_session"

// csrfField is the form field every POST carries its session's token in.
const csrfField = "csrf_token"

// session is one browser's state: its CSRF token and, once logged in (or
// always without login), the Kafka client acting as its principal.
type session struct {
	id   string
	csrf string
	// user is the SASL user logged in; "" without login.
	user string
	// client is the session's own client (SASL) or the console's shared one.
	client *kgo.Client
	// owned reports whether client is this session's to close.
	owned   bool
	expires time.Time
}

// Client is the Kafka client acting as the session's principal.
func (s *session) Client() *kgo.Client { return s.client }

// Admin is a kadm view of Client.
func (s *session) Admin() *kadm.Client { return admin(s.client) }

// User is the logged-in user, or "".
func (s *session) User() string { return s.user }

// CSRF is the token a form of this session must post in csrf_token.
func (s *session) CSRF() string { return s.csrf }

// checkCSRF compares a posted token with the session's in constant time.
func (s *session) checkCSRF(posted string) bool {
	return posted != "" && subtle.ConstantTimeCompare([]byte(posted), []byte(s.csrf)) == 1
}

// sessions are held in memory, bounded in number, each expiring after ttl
// without use.
type sessions struct {
	clock clock.Clock
	ttl   time.Duration
	max   int

	mu   sync.Mutex
	byID map[string]*session
	// closed: closeAll ran, so a client handed in later is closed at once.
	closed bool
}

func newSessions(c clock.Clock, ttl time.Duration, max int) *sessions {
	return &sessions{clock: c, ttl: ttl, max: max, byID: make(map[string]*session)}
}

// randomToken is 32 bytes from crypto/rand, hex-encoded.
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b)
}

// get returns the live session of id and extends it, or nil.
func (ss *sessions) get(id string) *session {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s := ss.byID[id]
	if s == nil {
		return nil
	}
	now := ss.clock.Now()
	if now.After(s.expires) {
		ss.removeLocked(s)
		return nil
	}
	s.expires = now.Add(ss.ttl)
	return s
}

// create adds a session holding client (nil before login), evicting
// expired sessions, then the one closest to expiry, when full.
func (ss *sessions) create(user string, client *kgo.Client, owned bool) *session {
	s := &session{id: randomToken(), csrf: randomToken(), user: user, client: client, owned: owned}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.closed {
		if owned && client != nil {
			go client.Close()
		}
		s.client = nil
		return s
	}
	now := ss.clock.Now()
	s.expires = now.Add(ss.ttl)
	if len(ss.byID) >= ss.max {
		ss.evictLocked(now)
	}
	ss.byID[s.id] = s
	return s
}

func (ss *sessions) evictLocked(now time.Time) {
	var oldest *session
	for _, s := range ss.byID {
		if now.After(s.expires) {
			ss.removeLocked(s)
			continue
		}
		if oldest == nil || s.expires.Before(oldest.expires) {
			oldest = s
		}
	}
	if len(ss.byID) >= ss.max && oldest != nil {
		ss.removeLocked(oldest)
	}
}

// remove ends a session (logout) and closes its own client.
func (ss *sessions) remove(s *session) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.removeLocked(s)
}

func (ss *sessions) removeLocked(s *session) {
	delete(ss.byID, s.id)
	if s.owned && s.client != nil {
		// Close waits for in-flight requests: not under the lock.
		go s.client.Close()
	}
}

func (ss *sessions) closeAll() {
	ss.mu.Lock()
	all := ss.byID
	ss.byID = make(map[string]*session)
	ss.closed = true
	ss.mu.Unlock()
	for _, s := range all {
		if s.owned && s.client != nil {
			s.client.Close()
		}
	}
}

// setCookie hands the session's id to the browser: HttpOnly, SameSite
// Strict (a cross-site form never carries it), Secure over TLS.
func setCookie(w http.ResponseWriter, r *http.Request, s *session) {
	http.SetCookie(w, &http.Cookie{
		Name: cookieName, Value: s.id, Path: "/",
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	})
}

func clearCookie(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode})
}

// fromRequest is the request's live session, or nil.
func (ss *sessions) fromRequest(r *http.Request) *session {
	ck, err := r.Cookie(cookieName)
	if err != nil || ck.Value == "" {
		return nil
	}
	return ss.get(ck.Value)
}
