package config

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// refuseUnbuiltSecurity stops start-up when the configuration asks for security Sluice does
// not have yet, or configures SASL by halves (checkSASL). Running such a node would silently
// serve without the protection the operator configured, so each case is an error naming the
// key.
func refuseUnbuiltSecurity(c *Config) error {
	var errs []error
	refuse := func(key, what string) {
		errs = append(errs, fmt.Errorf("configuration %s: %s is not supported by Sluice yet; refusing to start instead of running without it", key, what))
	}
	errs = append(errs, checkAuthorizer(c))
	if c.str("ssl.engine.factory.class") != "" {
		refuse("ssl.engine.factory.class", "a custom SSL engine factory (a Java class)")
	}
	for _, layer := range []map[string]string{c.static, c.dynDefault, c.dynBroker} {
		for _, key := range slices.Sorted(maps.Keys(layer)) {
			if strings.HasPrefix(key, "listener.name.") && strings.HasSuffix(key, ".ssl.engine.factory.class") {
				refuse(key, "a custom SSL engine factory (a Java class)")
			}
		}
	}
	errs = append(errs, checkSASL(c))
	return errors.Join(errs...)
}

func isSASL(protocol string) bool { return protocol == "SASL_PLAINTEXT" || protocol == "SASL_SSL" }

// listenerPrefix is Kafka's per-listener key prefix: listener.name.<listener in lower case>.
func listenerPrefix(listener string) string {
	return "listener.name." + strings.ToLower(listener) + "."
}

// ListenerValue is a key's effective value for one listener, as Kafka's
// valuesWithPrefixOverride gives it to the listener's channel builder:
// listener.name.<listener>.<key> when set in any layer, else the key's own value (its
// default included). setAs is the name the value came from, for messages; ok is false when
// the key has no value at all. Secrets come back as they are: keep them out of logs.
func (c *Config) ListenerValue(listener, key string) (value, setAs string, ok bool) {
	prefixed := listenerPrefix(listener) + key
	if v, _, found := c.lookup(prefixed); found {
		return v, prefixed, true
	}
	v, found := c.resolved(key)
	return v, key, found
}

// ListenerProtocol is a listener's security protocol from listener.security.protocol.map
// ("" when the map does not name it).
func (c *Config) ListenerProtocol(listener string) string {
	return c.kraft.protocols[strings.ToUpper(listener)]
}

// checkListenerOverrides validates listener.name.<listener>.<key> values of Kafka's broker
// keys against the key's own type and validator, as Kafka does when it parses a listener's
// prefixed configs; the error names the prefixed key.
func checkListenerOverrides(c *Config) error {
	var errs []error
	for _, layer := range []map[string]string{c.static, c.dynDefault, c.dynBroker} {
		for _, key := range slices.Sorted(maps.Keys(layer)) {
			rest, ok := strings.CutPrefix(key, "listener.name.")
			if !ok {
				continue
			}
			_, base, ok := strings.Cut(rest, ".")
			d, known := c.brokerDefs[base]
			if !ok || !known {
				continue
			}
			d.Name = key
			if err := validateValue(d, layer[key]); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}
