package node

import (
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"sluice/internal/config"
)

// TestDebugListenerNeedsUsersWhenSecured: with an SSL listener, a debug
// listener off loopback without users stops start-up naming the key; on
// loopback, or with users, it starts; bad users are refused without the
// hash in the message.
func TestDebugListenerNeedsUsersWhenSecured(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, protocol, debug, users, want string
	}{
		{"plaintext anywhere", "PLAINTEXT", "0.0.0.0:0", "", ""},
		{"ssl on loopback", "SSL", "127.0.0.1:0", "", ""},
		{"ssl on localhost", "SSL", "localhost:0", "", ""},
		{"ssl off loopback", "SSL", "0.0.0.0:0", "", "listener EXTERNAL is SSL, so a debug listener off loopback needs credentials: set sluice.debug.listener.basic.auth.users"},
		{"ssl off loopback by address", "SSL", "10.1.2.3:0", "", "needs credentials"},
		{"ssl with users", "SSL", "0.0.0.0:0", "prom:" + string(hash), ""},
		{"bad users", "PLAINTEXT", "127.0.0.1:0", "prom:notahash", `sluice.debug.listener.basic.auth.users: user "prom": the hash is not a bcrypt hash`},
	} {
		t.Run(c.name, func(t *testing.T) {
			settings := map[string]string{
				"listeners":                      "EXTERNAL://127.0.0.1:0,CONTROLLER://127.0.0.1:0",
				"listener.security.protocol.map": "EXTERNAL:" + c.protocol + ",CONTROLLER:PLAINTEXT",
				"inter.broker.listener.name":     "EXTERNAL",
			}
			if c.users != "" {
				settings[config.SluiceDebugListenerUsers.Name()] = c.users
			}
			cfg, err := config.Parse("", settings)
			if err != nil {
				t.Fatal(err)
			}
			n := &Node{cfg: cfg}
			users, err := n.consoleUsers(c.debug)
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if (c.users != "") != (users != nil) {
					t.Fatalf("users %v for %q", users, c.users)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want %q", err, c.want)
			}
		})
	}
}
