package sasl

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/sluice-io/sluice/internal/auth"
)

func plainUsers(t testing.TB) *PlainUsers {
	t.Helper()
	e, err := ParseServerJAASConfig(`org.apache.kafka.common.security.plain.PlainLoginModule required
		username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";`)
	if err != nil {
		t.Fatal(err)
	}
	u, err := PlainUsersFromJAAS(e)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestPlainFranzGo(t *testing.T) {
	users := plainUsers(t)
	cases := []struct {
		name       string
		auth       plain.Auth
		wantClient string // "" with wantErr: Kafka's generic message
		wantErr    bool
	}{
		{name: "alice", auth: plain.Auth{User: "alice", Pass: "alice-secret"}},
		{name: "admin", auth: plain.Auth{User: "admin", Pass: "admin-secret"}},
		{name: "authzid equal to user", auth: plain.Auth{Zid: "alice", User: "alice", Pass: "alice-secret"}},
		{name: "wrong password", auth: plain.Auth{User: "alice", Pass: "admin-secret"}, wantErr: true,
			wantClient: "Authentication failed: Invalid username or password"},
		{name: "unknown user", auth: plain.Auth{User: "mallory", Pass: "alice-secret"}, wantErr: true,
			wantClient: "Authentication failed: Invalid username or password"},
		{name: "username is not a user", auth: plain.Auth{User: "name", Pass: "admin"}, wantErr: true,
			wantClient: "Authentication failed: Invalid username or password"},
		{name: "password prefix", auth: plain.Auth{User: "alice", Pass: "alice-secre"}, wantErr: true,
			wantClient: "Authentication failed: Invalid username or password"},
		{name: "other authzid", auth: plain.Auth{Zid: "admin", User: "alice", Pass: "alice-secret"}, wantErr: true,
			wantClient: "Authentication failed: Client requested an authorization id that is different from username"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := NewPlainServer(users)
			r := exchange(t, c.auth.AsMechanism(), srv, t0)
			if !c.wantErr {
				if r.serverErr != nil || r.clientErr != nil {
					t.Fatalf("refused: %+v", r)
				}
				if got := srv.Principal(); got != auth.User(c.auth.User) {
					t.Fatalf("principal %v", got)
				}
				if _, bounded := srv.SessionLifetime(); bounded {
					t.Fatal("PLAIN bounds the session")
				}
				return
			}
			wantRefused(t, r.serverErr, Plain, c.wantClient)
			if !srv.Principal().IsZero() {
				t.Fatalf("principal %v after a refusal", srv.Principal())
			}
			if strings.Contains(r.serverErr.Error(), c.auth.Pass) {
				t.Fatalf("error %q shows the password", r.serverErr)
			}
		})
	}
}

func TestPlainMalformed(t *testing.T) {
	cases := []struct {
		name string
		msg  string
		ok   bool
	}{
		{"empty", "", false},
		{"no NUL", "alice", false},
		{"no password part", "\x00alice", false},
		{"empty password", "\x00alice\x00", false},
		{"empty user", "\x00\x00alice-secret", false},
		{"extra NUL joins the password", "\x00alice\x00alice-secret\x00", false},
		{"well formed", "\x00alice\x00alice-secret", true},
	}
	for _, c := range cases {
		srv := NewPlainServer(plainUsers(t))
		resp, done, err := srv.Step([]byte(c.msg), t0)
		if c.ok != (err == nil) || done != c.ok {
			t.Errorf("%s: done %v err %v", c.name, done, err)
		}
		if c.ok && len(resp) != 0 {
			t.Errorf("%s: response %q", c.name, resp)
		}
	}
	srv := NewPlainServer(plainUsers(t))
	_, _, err := srv.Step([]byte("\x00\x00x"), t0)
	wantRefused(t, err, Plain, "") // username not specified: generic
}

func TestPlainOneMessageOnly(t *testing.T) {
	srv := NewPlainServer(plainUsers(t))
	if _, done, err := srv.Step([]byte("\x00alice\x00alice-secret"), t0); !done || err != nil {
		t.Fatalf("done %v err %v", done, err)
	}
	if _, _, err := srv.Step([]byte("\x00alice\x00alice-secret"), t0); err == nil {
		t.Fatal("a second message was accepted")
	}
	srv = NewPlainServer(plainUsers(t))
	srv.Step([]byte("\x00alice\x00wrong"), t0)
	if _, done, err := srv.Step([]byte("\x00alice\x00alice-secret"), t0); done || err == nil {
		t.Fatal("a retry after a refusal was accepted")
	}
}

func TestPlainUsersFromJAASWantsPlainModule(t *testing.T) {
	if _, err := PlainUsersFromJAAS(JAASEntry{LoginModule: ScramLoginModule}); err == nil {
		t.Fatal("a SCRAM login module gave PLAIN users")
	}
}

func TestClientMessage(t *testing.T) {
	err := refuse(Plain, "detail")
	if got := ClientMessage(err, Plain, false); got != "Authentication failed during authentication due to invalid credentials with SASL mechanism PLAIN" {
		t.Fatal(got)
	}
	if got := ClientMessage(err, Plain, true); got != "Authentication failed during re-authentication due to invalid credentials with SASL mechanism PLAIN" {
		t.Fatal(got)
	}
	if got := ClientMessage(refuseWith(Plain, "shown"), Plain, false); got != "shown" {
		t.Fatal(got)
	}
}
