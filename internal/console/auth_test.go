package console

import (
	"net/http"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

func TestBasicAuthGuardsAllButTheProbes(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	users, err := ParseBasicAuthUsers("prom:" + string(hash))
	if err != nil {
		t.Fatal(err)
	}
	base := startConsole(t, Options{Listeners: []Listener{{Key: debugKey, Metrics: true, Pprof: true, Users: users}}})
	do := func(path, user, password string) int {
		req, err := http.NewRequest(http.MethodGet, base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if user != "" {
			req.SetBasicAuth(user, password)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusUnauthorized && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic ") {
			t.Errorf("%s: 401 without a Basic challenge", path)
		}
		return resp.StatusCode
	}
	for _, c := range []struct {
		path, user, password string
		want                 int
	}{
		{"/healthz", "", "", http.StatusOK},
		{"/readyz", "", "", http.StatusOK},
		{"/metrics", "", "", http.StatusUnauthorized},
		{"/metrics", "prom", "wrong", http.StatusUnauthorized},
		{"/metrics", "nobody", "s3cret", http.StatusUnauthorized},
		{"/metrics", "prom", "s3cret", http.StatusOK},
		{"/debug/pprof/", "", "", http.StatusUnauthorized},
		{"/debug/pprof/", "prom", "s3cret", http.StatusOK},
	} {
		if got := do(c.path, c.user, c.password); got != c.want {
			t.Errorf("GET %s as %q/%q: %d, want %d", c.path, c.user, c.password, got, c.want)
		}
	}
}

func TestParseBasicAuthUsersRefusals(t *testing.T) {
	hash, _ := bcrypt.GenerateFromPassword([]byte("x"), bcrypt.MinCost)
	for _, c := range []struct{ in, want string }{
		{"", "no users"},
		{"prom", "entry 1 is not name:bcrypt-hash"},
		{":" + string(hash), "entry 1 is not name:bcrypt-hash"},
		{"prom:plaintext-password", `user "prom": the hash is not a bcrypt hash`},
		{"a:" + string(hash) + ",a:" + string(hash), `user "a" appears twice`},
	} {
		_, err := ParseBasicAuthUsers(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseBasicAuthUsers(%q): %v, want %q", c.in, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "plaintext-password") {
			t.Errorf("the error shows the secret: %v", err)
		}
	}
}
