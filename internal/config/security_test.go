package config

import (
	"strings"
	"testing"
)

// SSL listeners are built: the configuration accepts them, on the inter-broker and
// controller listeners too; their keystores are the node's to read (tlsconf).
func TestSSLListenersAccepted(t *testing.T) {
	c, err := Parse("listeners=SSL://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093\n"+
		"listener.security.protocol.map=SSL:SSL,CONTROLLER:SSL\n"+
		"security.inter.broker.protocol=SSL\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.InterBrokerListenerName() != "SSL" || c.ListenerProtocol("SSL") != "SSL" || c.ListenerProtocol("controller") != "SSL" {
		t.Errorf("inter-broker %s, protocols %s %s", c.InterBrokerListenerName(), c.ListenerProtocol("SSL"), c.ListenerProtocol("CONTROLLER"))
	}
}

// listener.name.<listener>.<key> overrides the key for that listener only, as Kafka's
// prefix does; setAs names where the value came from.
func TestListenerValue(t *testing.T) {
	c, err := Parse("ssl.client.auth=requested\nlistener.name.internal.ssl.client.auth=required\n"+
		"ssl.keystore.location=/etc/broker.jks\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []struct{ listener, key, value, setAs string }{
		{"INTERNAL", "ssl.client.auth", "required", "listener.name.internal.ssl.client.auth"},
		{"EXTERNAL", "ssl.client.auth", "requested", "ssl.client.auth"},
		{"INTERNAL", "ssl.keystore.location", "/etc/broker.jks", "ssl.keystore.location"},
		{"INTERNAL", "ssl.enabled.protocols", "TLSv1.2,TLSv1.3", "ssl.enabled.protocols"},
	} {
		v, setAs, ok := c.ListenerValue(q.listener, q.key)
		if !ok || v != q.value || setAs != q.setAs {
			t.Errorf("%s %s = %q from %s (%v)", q.listener, q.key, v, setAs, ok)
		}
	}
	if _, _, ok := c.ListenerValue("INTERNAL", "ssl.truststore.location"); ok {
		t.Error("a key with no value reported one")
	}
}

// A listener-prefixed value is checked against its key's validator, the error naming the
// prefixed key and hiding a password.
func TestListenerOverrideValidated(t *testing.T) {
	_, err := Parse("listener.name.ssl.socket.receive.buffer.bytes=lots\n", nil)
	if err == nil || !strings.Contains(err.Error(), "listener.name.ssl.socket.receive.buffer.bytes") {
		t.Errorf("bad prefixed value: %v", err)
	}
	if _, err := Parse("listener.name.ssl.ssl.keystore.password=hunter2\n", nil); err != nil {
		t.Errorf("prefixed password: %v", err)
	}
}
