package node

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/sluice-io/sluice/internal/clock"
)

// jwksJSON is a JWKS holding one fresh EC key per id.
func jwksJSON(t *testing.T, kids ...string) []byte {
	t.Helper()
	var set jose.JSONWebKeySet
	for _, kid := range kids {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: &k.PublicKey, KeyID: kid, Algorithm: "ES256", Use: "sig"})
	}
	b, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func keyIDs(s *jwkSource, kid string) []string {
	var out []string
	for _, k := range s.Keys(kid) {
		out = append(out, k.KeyID)
	}
	return out
}

// A JWKS URL is read at start-up, again once the refresh interval passed
// and early (at most every 10 s) for a key id it lacks; a failed read
// keeps the last keys. A file: URL the same way.
func TestJWKSourceRefreshes(t *testing.T) {
	var mu sync.Mutex
	body := jwksJSON(t, "a")
	fail := false
	var fetches atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fetches.Add(1)
		mu.Lock()
		defer mu.Unlock()
		if fail {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		w.Write(body)
	}))
	defer srv.Close()
	set := func(b []byte, f bool) {
		mu.Lock()
		body, fail = b, f
		mu.Unlock()
	}
	clk := clock.NewManual(time.Unix(1_700_000_000, 0))
	s, err := newJWKSource(srv.URL, time.Hour, clk)
	if err != nil {
		t.Fatal(err)
	}
	if got := keyIDs(s, "a"); len(got) != 1 || got[0] != "a" {
		t.Fatalf("keys %v", got)
	}

	set(jwksJSON(t, "a", "b"), false)
	if got := keyIDs(s, "b"); len(got) != 1 {
		t.Fatalf("an unknown kid refetched within 10 s of the last read: %v", got)
	}
	clk.Advance(jwksMinRefetch)
	if got := keyIDs(s, "b"); len(got) != 2 {
		t.Fatalf("an unknown kid after 10 s: keys %v", got)
	}

	set(nil, true)
	clk.Advance(time.Hour)
	if got := keyIDs(s, ""); len(got) != 2 {
		t.Fatalf("a failed refresh dropped the keys: %v", got)
	}
	set(jwksJSON(t, "c"), false)
	clk.Advance(time.Hour)
	if got := keyIDs(s, ""); len(got) != 1 || got[0] != "c" {
		t.Fatalf("keys after the hourly refresh %v", got)
	}
	if n := fetches.Load(); n != 4 {
		t.Errorf("%d fetches, want 4", n)
	}

	path := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(path, jwksJSON(t, "f"), 0o600); err != nil {
		t.Fatal(err)
	}
	fs, err := newJWKSource("file://"+path, time.Hour, clk)
	if err != nil {
		t.Fatal(err)
	}
	if got := keyIDs(fs, ""); len(got) != 1 || got[0] != "f" {
		t.Fatalf("file keys %v", got)
	}
	for _, bad := range []string{"file://" + path + ".missing", "ftp://example.com/jwks", srv.URL + "/x\x7f"} {
		if _, err := newJWKSource(bad, time.Hour, clk); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
