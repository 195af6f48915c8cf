package config

import (
	"fmt"
	"strings"
)

// StandardAuthorizerClass is the one authorizer.class.name Sluice builds:
// Kafka's KRaft authorizer over the ACLs in the metadata log.
const StandardAuthorizerClass = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"

// AuthorizerSettings are the authorizer's keys as Kafka's StandardAuthorizer
// reads them (they are not broker keys: Kafka passes them through to the
// authorizer's configure).
type AuthorizerSettings struct {
	// Enabled is authorizer.class.name naming the StandardAuthorizer; off,
	// every action is allowed, as Kafka without an authorizer.
	Enabled bool
	// SuperUsers is super.users as set: principals separated by ";".
	SuperUsers string
	// AllowIfNoACL is allow.everyone.if.no.acl.found, true only when it
	// reads "true" ignoring case (Java's Boolean.parseBoolean).
	AllowIfNoACL bool
}

// Authorizer returns the authorizer settings.
func (c *Config) Authorizer() AuthorizerSettings {
	return AuthorizerSettings{
		Enabled:      c.str("authorizer.class.name") == StandardAuthorizerClass,
		SuperUsers:   c.str("super.users"),
		AllowIfNoACL: strings.EqualFold(c.str("allow.everyone.if.no.acl.found"), "true"),
	}
}

// checkAuthorizer refuses an authorizer class other than the
// StandardAuthorizer (there is no Java class to load) and, with the
// authorizer on, a super user that is not Type:Name (Kafka's configure
// fails on it too).
func checkAuthorizer(c *Config) error {
	class := c.str("authorizer.class.name")
	switch class {
	case "":
		return nil
	case StandardAuthorizerClass:
	default:
		return fmt.Errorf("configuration authorizer.class.name: %s is not supported by Sluice yet (the one authorizer built is %s; empty means none); refusing to start",
			class, StandardAuthorizerClass)
	}
	for _, s := range strings.Split(c.str("super.users"), ";") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if typ, name, ok := strings.Cut(s, ":"); !ok || typ == "" || name == "" {
			return fmt.Errorf("configuration super.users: %q is not a principal of the form Type:Name (User:admin)", s)
		}
	}
	return nil
}
