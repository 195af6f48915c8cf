package node

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/crypto/bcrypt"

	"github.com/sluice-io/sluice/internal/config"
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

// TestMetricsListenerNeedsUsersWhenSecured: the metrics listener has the
// debug listener's refusal, naming its own keys; both keys on one address
// with different users stop start-up.
func TestMetricsListenerNeedsUsersWhenSecured(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	secured := map[string]string{
		"listeners":                      "EXTERNAL://127.0.0.1:0,CONTROLLER://127.0.0.1:0",
		"listener.security.protocol.map": "EXTERNAL:SSL,CONTROLLER:PLAINTEXT",
		"inter.broker.listener.name":     "EXTERNAL",
	}
	cfg, err := config.Parse("", secured)
	if err != nil {
		t.Fatal(err)
	}
	n := &Node{cfg: cfg}
	_, err = n.listenerUsers(config.SluiceMetricsListener, config.SluiceMetricsListenerUsers, "0.0.0.0:9644")
	want := "sluice.metrics.listener=0.0.0.0:9644: listener EXTERNAL is SSL, so a metrics listener off loopback needs credentials: set sluice.metrics.listener.basic.auth.users"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("metrics listener off loopback: %v, want %q", err, want)
	}

	cfg, err = config.Parse("", map[string]string{
		config.SluiceDebugListener.Name():        "127.0.0.1:9644",
		config.SluiceMetricsListener.Name():      "127.0.0.1:9644",
		config.SluiceDebugListenerUsers.Name():   "prom:" + string(hash),
		config.SluiceMetricsListenerUsers.Name(): "other:" + string(hash),
	})
	if err != nil {
		t.Fatal(err)
	}
	n = &Node{cfg: cfg, logger: slog.New(slog.DiscardHandler), metrics: prometheus.NewRegistry()}
	if err := n.newConsole(); err == nil || !strings.Contains(err.Error(), "different basic auth users") {
		t.Fatalf("two keys on one address with different users: %v", err)
	}
}
