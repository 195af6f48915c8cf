package node

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/internal/auth/tlsconf/tlstest"
	"github.com/sluice-io/sluice/internal/config"
)

// sslProps are a node's SSL broker listener with a certificate that names
// broker.example only, so that only pinning (not the name) lets the
// console in over loopback.
func sslProps(t *testing.T, clientAuth string) map[string]string {
	t.Helper()
	ca, err := tlstest.NewCA("Console Test CA")
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := ca.Issue(tlstest.LeafOptions{Subject: "CN=broker", Hosts: []string{"broker.example"}})
	if err != nil {
		t.Fatal(err)
	}
	ks, err := leaf.Keystore(tlstest.PKCS12, "store-secret", "")
	if err != nil {
		t.Fatal(err)
	}
	ts, err := tlstest.Truststore(tlstest.PKCS12, "store-secret", ca)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ksPath, tsPath := filepath.Join(dir, "keystore.p12"), filepath.Join(dir, "truststore.p12")
	if err := tlstest.WriteFile(ksPath, ks); err != nil {
		t.Fatal(err)
	}
	if err := tlstest.WriteFile(tsPath, ts); err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		"listeners":                      "SSL://127.0.0.1:0,CONTROLLER://127.0.0.1:{ctrl}",
		"listener.security.protocol.map": "SSL:SSL,CONTROLLER:PLAINTEXT",
		"inter.broker.listener.name":     "SSL",
		"ssl.keystore.type":              "PKCS12",
		"ssl.keystore.location":          ksPath,
		"ssl.keystore.password":          "store-secret",
		"ssl.truststore.type":            "PKCS12",
		"ssl.truststore.location":        tsPath,
		"ssl.truststore.password":        "store-secret",
		"ssl.client.auth":                clientAuth,
	}
}

// A node whose only broker listener is SSL: the console connects over TLS
// trusting the node's own certificate, though it names another host.
func TestWebConsoleOverSSL(t *testing.T) {
	_, base := consoleNode(t, sslProps(t, "none"))
	b := newBrowser(t, base)
	code, body := b.get("/")
	if code != http.StatusOK {
		t.Fatalf("overview over SSL: %d\n%s", code, body)
	}
	mustContain(t, "overview", body, `id="cluster-id"`, `class="voter" data-node="1"`)
}

// A listener that requires client certificates is refused at start-up,
// naming the key: the console has no certificate of its own.
func TestWebConsoleRefusesClientAuthRequired(t *testing.T) {
	props := sslProps(t, "required")
	props["listeners"] = "SSL://127.0.0.1:0,CONTROLLER://127.0.0.1:0"
	props["log.dirs"] = t.TempDir()
	props["sluice.console.listener"] = "127.0.0.1:0"
	cfg, err := config.Parse("", props)
	if err != nil {
		t.Fatal(err)
	}
	n, err := New(cfg, nil, nil)
	if err == nil {
		n.Close()
		t.Fatal("a console over a listener requiring client certificates was built")
	}
	if msg := err.Error(); !strings.Contains(msg, "sluice.console.listener") || !strings.Contains(msg, "ssl.client.auth=required") {
		t.Fatalf("refusal %q names neither the key nor the cause", msg)
	}
}
