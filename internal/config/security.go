package config

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// refuseUnbuiltSecurity stops start-up when the configuration asks for security Sluice does
// not have yet. Running such a node would silently serve without the protection the operator
// configured, so each case is an error naming the key.
func refuseUnbuiltSecurity(c *Config) error {
	var errs []error
	refuse := func(key, what string) {
		errs = append(errs, fmt.Errorf("configuration %s: %s is not supported by Sluice yet; refusing to start instead of running without it", key, what))
	}
	for _, l := range c.kraft.listeners {
		if l.Protocol != "PLAINTEXT" {
			refuse("listeners", fmt.Sprintf("listener %s with security protocol %s", l.Name, l.Protocol))
		}
	}
	for _, l := range c.kraft.advertised {
		if l.Protocol != "PLAINTEXT" {
			refuse("advertised.listeners", fmt.Sprintf("listener %s with security protocol %s", l.Name, l.Protocol))
		}
	}
	if c.isSet("security.inter.broker.protocol") && strings.ToUpper(c.str("security.inter.broker.protocol")) != "PLAINTEXT" {
		refuse("security.inter.broker.protocol", "inter-broker security protocol "+c.str("security.inter.broker.protocol"))
	}
	if c.str("authorizer.class.name") != "" {
		refuse("authorizer.class.name", "an authorizer ("+c.str("authorizer.class.name")+")")
	}
	for _, key := range []string{"sasl.enabled.mechanisms", "sasl.mechanism.inter.broker.protocol", "sasl.mechanism.controller.protocol"} {
		if c.isSet(key) {
			refuse(key, "SASL")
		}
	}
	for _, layer := range []map[string]string{c.static, c.dynDefault, c.dynBroker} {
		for _, key := range slices.Sorted(maps.Keys(layer)) {
			// listener.name.<listener>.<mechanism>.sasl.jaas.config and friends configure
			// per-listener SASL; they only make sense with SASL listeners.
			if strings.HasPrefix(key, "listener.name.") && strings.Contains(key, ".sasl.") {
				refuse(key, "per-listener SASL")
			}
		}
	}
	return errors.Join(errs...)
}
