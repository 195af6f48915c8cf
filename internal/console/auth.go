package console

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"golang.org/x/crypto/bcrypt"
)

// BasicAuthUsers are a listener's users: name to bcrypt hash, as
// Prometheus's web configuration keeps them (htpasswd -nbB writes one).
type BasicAuthUsers map[string][]byte

// ParseBasicAuthUsers reads "name:hash,name:hash" (the value of
// sluice.debug.listener.basic.auth.users or
// sluice.metrics.listener.basic.auth.users). Errors name the entry by its
// position and user, never the hash.
func ParseBasicAuthUsers(s string) (BasicAuthUsers, error) {
	users := BasicAuthUsers{}
	for i, entry := range strings.Split(s, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		name, hash, ok := strings.Cut(entry, ":")
		if !ok || name == "" {
			return nil, fmt.Errorf("entry %d is not name:bcrypt-hash", i+1)
		}
		if _, err := bcrypt.Cost([]byte(hash)); err != nil {
			return nil, fmt.Errorf("user %q: the hash is not a bcrypt hash (htpasswd -nbB writes one)", name)
		}
		if _, dup := users[name]; dup {
			return nil, fmt.Errorf("user %q appears twice", name)
		}
		users[name] = []byte(hash)
	}
	if len(users) == 0 {
		return nil, errors.New("no users")
	}
	return users, nil
}

// dummyHash is compared against when the user is unknown, so an unknown
// name costs what a wrong password does.
var dummyHash, _ = bcrypt.GenerateFromPassword([]byte("sluice-unknown-user"), bcrypt.MinCost)

// requireBasicAuth serves next only to a request with the credentials of
// one of users. The probes are never wrapped: they call without any.
func requireBasicAuth(users BasicAuthUsers, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if users.allows(r) {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("WWW-Authenticate", `Basic realm="sluice", charset="UTF-8"`)
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
	})
}

func (u BasicAuthUsers) allows(r *http.Request) bool {
	name, password, ok := r.BasicAuth()
	if !ok {
		return false
	}
	hash, known := u[name]
	if !known {
		hash = dummyHash
	}
	match := bcrypt.CompareHashAndPassword(hash, []byte(password)) == nil
	return subtle.ConstantTimeEq(boolInt(known), 1)&subtle.ConstantTimeEq(boolInt(match), 1) == 1
}

func boolInt(b bool) int32 {
	if b {
		return 1
	}
	return 0
}
