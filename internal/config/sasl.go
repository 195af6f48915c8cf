package config

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// SASL mechanisms Sluice serves (internal/auth/sasl).
var saslMechanisms = []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"}

// OAuthBearerValidatorHandler is the server callback handler class that
// selects the JWT validator of KIP-768 for OAUTHBEARER (without it, Kafka
// validates unsecured tokens).
const OAuthBearerValidatorHandler = "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler"

// ListenerMechanismValue is a key's value for one listener's SASL mechanism,
// as Kafka's SaslChannelBuilder reads it: listener.name.<l>.<mechanism>.<key>,
// else listener.name.<l>.<key>, else the key. setAs names where it came
// from; secrets come back as they are: keep them out of logs.
func (c *Config) ListenerMechanismValue(listener, mechanism, key string) (value, setAs string, ok bool) {
	prefixed := listenerPrefix(listener) + strings.ToLower(mechanism) + "." + key
	if v, _, found := c.lookup(prefixed); found {
		return v, prefixed, true
	}
	return c.ListenerValue(listener, key)
}

// SASLEnabledMechanisms is a listener's sasl.enabled.mechanisms (with its
// listener.name. prefix), upper-cased as SaslHandshake compares them.
func (c *Config) SASLEnabledMechanisms(listener string) []string {
	v, _, _ := c.ListenerValue(listener, "sasl.enabled.mechanisms")
	var out []string
	for _, m := range splitList(v) {
		out = append(out, strings.ToUpper(strings.TrimSpace(m)))
	}
	return out
}

// IsSASLListener reports whether listener.security.protocol.map makes a
// listener SASL_PLAINTEXT or SASL_SSL.
func (c *Config) IsSASLListener(listener string) bool { return isSASL(c.ListenerProtocol(listener)) }

// checkSASL stops start-up on half-configured SASL, naming the key (never a
// value): each SASL listener's mechanisms must be ones Sluice serves, each
// with its listener.name.<l>.<mechanism>.sasl.jaas.config (Kafka finds no
// JAAS entry otherwise); the inter-broker and controller mechanisms must
// be enabled on their listeners; OAUTHBEARER's JWT validator needs a JWKS.
func checkSASL(c *Config) error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("configuration %s: %s", key, fmt.Sprintf(format, args...)))
	}
	for _, name := range c.saslListeners() {
		_, setAs, _ := c.ListenerValue(name, "sasl.enabled.mechanisms")
		mechs := c.SASLEnabledMechanisms(name)
		if len(mechs) == 0 {
			bad(setAs, "listener %s is %s but enables no SASL mechanism", name, c.ListenerProtocol(name))
		}
		for _, m := range mechs {
			if !slices.Contains(saslMechanisms, m) {
				bad(setAs, "SASL mechanism %s on listener %s is not supported by Sluice (it serves %s)", m, name, strings.Join(saslMechanisms, ", "))
				continue
			}
			errs = append(errs, c.checkSASLMechanism(name, m)...)
		}
	}
	errs = append(errs, c.checkSASLClient(c.InterBrokerListenerName(), "sasl.mechanism.inter.broker.protocol", "inter-broker")...)
	if names := c.ControllerListenerNames(); len(names) > 0 {
		errs = append(errs, c.checkSASLClient(names[0], "sasl.mechanism.controller.protocol", "controller")...)
	}
	if delay, idle := c.Int(ConnectionFailedAuthenticationDelayMs), c.Long(ConnectionsMaxIdleMs); int64(delay) >= idle {
		bad("connection.failed.authentication.delay.ms", "%d must be less than connections.max.idle.ms (%d)", delay, idle)
	}
	return errors.Join(errs...)
}

// saslListeners are the SASL listeners this node serves or reaches (a
// broker-only node's controller listener).
func (c *Config) saslListeners() []string {
	var out []string
	for _, l := range c.kraft.listeners {
		if isSASL(l.Protocol) && !slices.Contains(out, l.Name) {
			out = append(out, l.Name)
		}
	}
	for _, name := range c.kraft.controllerListenerNames {
		if c.IsSASLListener(name) && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

func (c *Config) checkSASLMechanism(listener, mech string) []error {
	var errs []error
	jaasKey := listenerPrefix(listener) + strings.ToLower(mech) + ".sasl.jaas.config"
	if _, _, ok := c.lookup(jaasKey); !ok {
		errs = append(errs, fmt.Errorf("configuration %s: must be set for SASL mechanism %s on listener %s (Sluice reads no JAAS file)", jaasKey, mech, listener))
	}
	class, classKey, _ := c.ListenerMechanismValue(listener, mech, "sasl.server.callback.handler.class")
	switch {
	case class == "":
	case mech == "OAUTHBEARER" && class == OAuthBearerValidatorHandler:
		errs = append(errs, c.checkJWKS(listener, mech)...)
	default:
		errs = append(errs, fmt.Errorf("configuration %s: a custom callback handler (a Java class) is not supported", classKey))
	}
	return errs
}

// checkJWKS requires sasl.oauthbearer.jwks.endpoint.url as a file or
// http(s) URL for the JWT validator.
func (c *Config) checkJWKS(listener, mech string) []error {
	u, key, ok := c.ListenerMechanismValue(listener, mech, "sasl.oauthbearer.jwks.endpoint.url")
	if !ok || strings.TrimSpace(u) == "" {
		return []error{fmt.Errorf("configuration %s: must be set for the OAUTHBEARER JWT validator (%s) on listener %s", key, OAuthBearerValidatorHandler, listener)}
	}
	parsed, err := url.Parse(strings.TrimSpace(u))
	if err != nil || (parsed.Scheme != "file" && parsed.Scheme != "http" && parsed.Scheme != "https") {
		return []error{fmt.Errorf("configuration %s: must be a file:, http: or https: URL", key)}
	}
	return nil
}

// checkSASLClient checks the mechanism the node's own clients use on a SASL
// listener (inter-broker, controller): enabled there, and one the clients
// can speak.
func (c *Config) checkSASLClient(listener, key, what string) []error {
	if listener == "" || !c.IsSASLListener(listener) {
		return nil
	}
	mech := strings.ToUpper(c.str(key))
	if !slices.Contains(c.SASLEnabledMechanisms(listener), mech) {
		return []error{fmt.Errorf("configuration %s: %s must be included in sasl.enabled.mechanisms of listener %s when SASL is used for %s communication", key, mech, listener, what)}
	}
	if what == "controller" && strings.HasPrefix(mech, "SCRAM-") {
		// SCRAM credentials live in the metadata log the controllers
		// replicate over this listener, as Kafka's documentation warns.
		return []error{fmt.Errorf("configuration %s: SCRAM cannot be used for controller communication: its credentials are stored in the metadata log (use PLAIN)", key)}
	}
	if mech == "OAUTHBEARER" {
		return []error{fmt.Errorf("configuration %s: OAUTHBEARER for %s communication is not supported by Sluice yet (use PLAIN or SCRAM)", key, what)}
	}
	return nil
}
