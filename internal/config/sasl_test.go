package config

import (
	"strings"
	"testing"
)

const saslBase = "listeners=SASL_SSL://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093\n" +
	"listener.security.protocol.map=SASL_SSL:SASL_SSL,CONTROLLER:SASL_PLAINTEXT\n" +
	"inter.broker.listener.name=SASL_SSL\n" +
	"sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256\n" +
	"sasl.mechanism.inter.broker.protocol=SCRAM-SHA-256\n" +
	"sasl.mechanism.controller.protocol=PLAIN\n" +
	"listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_admin=\"hunter2\";\n" +
	"listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"admin\" password=\"hunter2\";\n" +
	"listener.name.controller.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"admin\" password=\"hunter2\" user_admin=\"hunter2\";\n" +
	"listener.name.controller.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;\n"

// A complete SASL configuration is accepted: SASL listeners, the
// inter-broker and controller mechanisms, per-listener mechanisms and the
// listener/mechanism prefix order.
func TestSASLConfigAccepted(t *testing.T) {
	c, err := Parse(saslBase+"listener.name.controller.sasl.enabled.mechanisms=plain\n"+
		"connections.max.reauth.ms=60000\nlistener.name.sasl_ssl.plain.connections.max.reauth.ms=5000\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.SASLEnabledMechanisms("SASL_SSL"); strings.Join(got, ",") != "PLAIN,SCRAM-SHA-256" {
		t.Errorf("SASL_SSL mechanisms %v", got)
	}
	if got := c.SASLEnabledMechanisms("CONTROLLER"); strings.Join(got, ",") != "PLAIN" {
		t.Errorf("CONTROLLER mechanisms %v", got)
	}
	for _, q := range []struct{ mech, value, setAs string }{
		{"PLAIN", "5000", "listener.name.sasl_ssl.plain.connections.max.reauth.ms"},
		{"SCRAM-SHA-256", "60000", "connections.max.reauth.ms"},
	} {
		v, setAs, _ := c.ListenerMechanismValue("SASL_SSL", q.mech, "connections.max.reauth.ms")
		if v != q.value || setAs != q.setAs {
			t.Errorf("%s: %s from %s, want %s from %s", q.mech, v, setAs, q.value, q.setAs)
		}
	}
}

// Half-configured SASL stops start-up naming the key, never a secret.
func TestSASLHalfConfiguredRefused(t *testing.T) {
	jwt := "listener.name.sasl_ssl.oauthbearer.sasl.server.callback.handler.class=" + OAuthBearerValidatorHandler + "\n" +
		"listener.name.sasl_ssl.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;\n"
	for _, c := range []struct{ name, text, key string }{
		{"GSSAPI default", strings.Replace(saslBase, "sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256\n", "", 1), "sasl.enabled.mechanisms"},
		{"unknown mechanism", saslBase + "listener.name.sasl_ssl.sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,FOO\n", "listener.name.sasl_ssl.sasl.enabled.mechanisms"},
		{"no JAAS", strings.Replace(saslBase, "listener.name.sasl_ssl.plain.sasl.jaas.config", "listener.name.other.plain.sasl.jaas.config", 1), "listener.name.sasl_ssl.plain.sasl.jaas.config"},
		{"inter-broker mechanism not enabled", strings.Replace(saslBase, "inter.broker.protocol=SCRAM-SHA-256", "inter.broker.protocol=SCRAM-SHA-512", 1), "sasl.mechanism.inter.broker.protocol"},
		{"inter-broker GSSAPI default", strings.Replace(saslBase, "sasl.mechanism.inter.broker.protocol=SCRAM-SHA-256\n", "", 1), "sasl.mechanism.inter.broker.protocol"},
		{"controller mechanism not enabled", saslBase + "listener.name.controller.sasl.enabled.mechanisms=SCRAM-SHA-256\n", "sasl.mechanism.controller.protocol"},
		{"custom callback handler", saslBase + "listener.name.sasl_ssl.plain.sasl.server.callback.handler.class=com.example.Handler\n", "listener.name.sasl_ssl.plain.sasl.server.callback.handler.class"},
		{"JWT validator without JWKS", saslBase + "listener.name.sasl_ssl.sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,OAUTHBEARER\n" + jwt, "sasl.oauthbearer.jwks.endpoint.url"},
		{"JWKS not a URL", saslBase + "listener.name.sasl_ssl.sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,OAUTHBEARER\n" + jwt + "sasl.oauthbearer.jwks.endpoint.url=/etc/jwks.json\n", "sasl.oauthbearer.jwks.endpoint.url"},
		{"controller SCRAM", strings.Replace(saslBase, "controller.protocol=PLAIN", "controller.protocol=SCRAM-SHA-256", 1), "sasl.mechanism.controller.protocol"},
		{"delay not below idle", saslBase + "connection.failed.authentication.delay.ms=600000\n", "connection.failed.authentication.delay.ms"},
	} {
		_, err := Parse(c.text, nil)
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		if !strings.Contains(err.Error(), c.key) {
			t.Errorf("%s: error does not name %s: %v", c.name, c.key, err)
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: error leaks a password: %v", c.name, err)
		}
	}
}
