package config

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
)

// Listener is one entry of listeners or advertised.listeners. Host "" means all interfaces
// (for listeners) or "let the node pick its host name" (for advertised.listeners).
type Listener struct {
	Name     string // e.g. PLAINTEXT, CONTROLLER
	Host     string
	Port     int
	Protocol string // security protocol from listener.security.protocol.map
}

// Addr is host:port, ready for net.Listen.
func (l Listener) Addr() string { return net.JoinHostPort(l.Host, strconv.Itoa(l.Port)) }

// Voter is one entry of controller.quorum.voters (id@host:port).
type Voter struct {
	ID   int32
	Host string
	Port int
}

// Addr is host:port of the voter's CONTROLLER listener.
func (v Voter) Addr() string { return net.JoinHostPort(v.Host, strconv.Itoa(v.Port)) }

// Process roles.
const (
	RoleBroker     = "broker"
	RoleController = "controller"
)

type kraftSettings struct {
	roles                   []string
	nodeID                  int32
	listeners               []Listener
	advertised              []Listener
	controllerListenerNames []string
	interBrokerListener     string
	voters                  []Voter
	bootstrapServers        []string
	protocols               map[string]string
}

func (k kraftSettings) hasRole(r string) bool { return slices.Contains(k.roles, r) }

// isSingleNode: combined roles and this node the only static voter, so no other broker can
// ever join the quorum's cluster as a voter; a one-broker cluster.
func (k kraftSettings) isSingleNode() bool {
	return k.hasRole(RoleBroker) && k.hasRole(RoleController) &&
		len(k.voters) == 1 && k.voters[0].ID == k.nodeID
}

// ProcessRoles returns process.roles (broker, controller or both).
func (c *Config) ProcessRoles() []string { return slices.Clone(c.kraft.roles) }

// HasRole reports whether process.roles contains role.
func (c *Config) HasRole(role string) bool { return c.kraft.hasRole(role) }

// NodeID returns node.id.
func (c *Config) NodeID() int32 { return c.kraft.nodeID }

// Listeners returns listeners with their security protocols.
func (c *Config) Listeners() []Listener { return slices.Clone(c.kraft.listeners) }

// AdvertisedListeners returns advertised.listeners, which defaults to listeners.
func (c *Config) AdvertisedListeners() []Listener { return slices.Clone(c.kraft.advertised) }

// AdvertisedBrokerListeners are the advertised listeners that are not controller listeners:
// what Metadata and broker registration publish, as Kafka's effective broker listeners.
func (c *Config) AdvertisedBrokerListeners() []Listener {
	var out []Listener
	for _, l := range c.kraft.advertised {
		if !slices.Contains(c.kraft.controllerListenerNames, l.Name) {
			out = append(out, l)
		}
	}
	return out
}

// AdvertisedControllerListeners are the controller listeners other nodes reach this controller
// on: the advertised ones, and for a controller listener missing from advertised.listeners
// its entry in listeners, as Kafka does.
func (c *Config) AdvertisedControllerListeners() []Listener {
	var out []Listener
	for _, name := range c.kraft.controllerListenerNames {
		for _, set := range [][]Listener{c.kraft.advertised, c.kraft.listeners} {
			if i := slices.IndexFunc(set, func(l Listener) bool { return l.Name == name }); i >= 0 {
				out = append(out, set[i])
				break
			}
		}
	}
	return out
}

// ControllerListenerNames returns controller.listener.names.
func (c *Config) ControllerListenerNames() []string {
	return slices.Clone(c.kraft.controllerListenerNames)
}

// InterBrokerListenerName is inter.broker.listener.name, or the listener named after
// security.inter.broker.protocol when unset, as in Kafka.
func (c *Config) InterBrokerListenerName() string { return c.kraft.interBrokerListener }

// Voters returns controller.quorum.voters (empty when the quorum is found through
// controller.quorum.bootstrap.servers).
func (c *Config) Voters() []Voter { return slices.Clone(c.kraft.voters) }

// QuorumBootstrapServers returns controller.quorum.bootstrap.servers as host:port strings.
func (c *Config) QuorumBootstrapServers() []string { return slices.Clone(c.kraft.bootstrapServers) }

// LogDirs returns log.dirs, or log.dir when log.dirs is unset, as Kafka does.
func (c *Config) LogDirs() []string {
	if v, ok := c.resolved("log.dirs"); ok {
		return splitList(v)
	}
	v, _ := c.resolved("log.dir")
	return splitList(v)
}

func (c *Config) str(key string) string {
	v, _ := c.resolved(key)
	return strings.TrimSpace(v)
}

func (c *Config) isSet(key string) bool {
	for _, l := range c.layers()[:3] {
		if _, ok := l.values[key]; ok {
			return true
		}
	}
	return false
}

// deriveKRaft parses and cross-checks the KRaft keys as KafkaConfig.validateValues does for
// the checks that decide whether a node can start.
func deriveKRaft(c *Config) (kraftSettings, error) {
	var k kraftSettings
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("configuration %s: %s", key, fmt.Sprintf(format, args...)))
	}

	k.roles = splitList(c.str("process.roles"))
	if len(k.roles) == 0 {
		bad("process.roles", "must contain broker, controller or both")
	}
	for i, r := range k.roles {
		if r != RoleBroker && r != RoleController {
			bad("process.roles", "unknown role %q (want broker and/or controller)", r)
		}
		if slices.Contains(k.roles[:i], r) {
			bad("process.roles", "role %q listed twice", r)
		}
	}
	id, err := strconv.ParseInt(c.str("node.id"), 10, 32)
	if err != nil || id < 0 {
		bad("node.id", "must be a non-negative integer, got %q", c.str("node.id"))
	}
	k.nodeID = int32(id)

	k.protocols, err = parseProtocolMap(c.str("listener.security.protocol.map"))
	if err != nil {
		bad("listener.security.protocol.map", "%v", err)
	}
	for _, n := range splitList(c.str("controller.listener.names")) {
		k.controllerListenerNames = append(k.controllerListenerNames, strings.ToUpper(n))
	}
	if !c.isSet("listener.security.protocol.map") {
		// Kafka treats controller listeners missing from a default map as PLAINTEXT.
		for _, n := range k.controllerListenerNames {
			if _, ok := k.protocols[n]; !ok {
				k.protocols[n] = "PLAINTEXT"
			}
		}
	}

	k.listeners, err = parseListeners(c.str("listeners"), k.protocols)
	if err != nil {
		bad("listeners", "%v", err)
	}
	if c.str("advertised.listeners") == "" {
		k.advertised = slices.Clone(k.listeners)
	} else {
		k.advertised, err = parseListeners(c.str("advertised.listeners"), k.protocols)
		if err != nil {
			bad("advertised.listeners", "%v", err)
		}
		for _, l := range k.advertised {
			if l.Host == "0.0.0.0" || l.Host == "::" {
				bad("advertised.listeners", "cannot advertise the non-routable address %s", l.Host)
			}
		}
	}

	k.voters, err = parseVoters(c.str("controller.quorum.voters"))
	if err != nil {
		bad("controller.quorum.voters", "%v", err)
	}
	k.bootstrapServers = splitList(c.str("controller.quorum.bootstrap.servers"))
	for _, s := range k.bootstrapServers {
		if _, _, err := splitHostPort(s); err != nil {
			bad("controller.quorum.bootstrap.servers", "%v", err)
		}
	}
	if len(k.voters) == 0 && len(k.bootstrapServers) == 0 {
		bad("controller.quorum.voters", "either controller.quorum.voters or controller.quorum.bootstrap.servers must be set")
	}
	if len(errs) > 0 {
		return k, errors.Join(errs...)
	}
	return k, errors.Join(checkRoleListeners(c, &k)...)
}

// checkRoleListeners checks the listener rules that depend on the roles.
func checkRoleListeners(c *Config, k *kraftSettings) []error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("configuration %s: %s", key, fmt.Sprintf(format, args...)))
	}
	names := make([]string, 0, len(k.listeners))
	for _, l := range k.listeners {
		names = append(names, l.Name)
	}
	if len(k.controllerListenerNames) == 0 {
		bad("controller.listener.names", "must name at least one listener")
	}
	isController := func(n string) bool { return slices.Contains(k.controllerListenerNames, n) }
	if k.hasRole(RoleController) {
		if !slices.ContainsFunc(names, isController) {
			bad("controller.listener.names", "the controller role needs one of %v in listeners", k.controllerListenerNames)
		}
		if len(k.voters) > 0 && !slices.ContainsFunc(k.voters, func(v Voter) bool { return v.ID == k.nodeID }) {
			bad("controller.quorum.voters", "node.id %d has the controller role but is not a voter", k.nodeID)
		}
	}
	if !k.hasRole(RoleController) && slices.ContainsFunc(k.voters, func(v Voter) bool { return v.ID == k.nodeID }) {
		bad("node.id", "%d is a voter in controller.quorum.voters but process.roles lacks controller", k.nodeID)
	}
	if !k.hasRole(RoleController) && slices.ContainsFunc(names, isController) {
		bad("listeners", "a broker-only node must not listen on controller listener %v", k.controllerListenerNames)
	}
	if !k.hasRole(RoleBroker) {
		for _, n := range names {
			if !isController(n) {
				bad("listeners", "a controller-only node may only have controller listeners, found %s", n)
			}
		}
		k.interBrokerListener = ""
		return errs
	}

	if c.isSet("inter.broker.listener.name") && c.isSet("security.inter.broker.protocol") {
		bad("inter.broker.listener.name", "cannot be set together with security.inter.broker.protocol")
	}
	k.interBrokerListener = strings.ToUpper(c.str("inter.broker.listener.name"))
	if k.interBrokerListener == "" {
		k.interBrokerListener = c.str("security.inter.broker.protocol")
	}
	if isController(k.interBrokerListener) {
		bad("inter.broker.listener.name", "%s is a controller listener", k.interBrokerListener)
	}
	if !slices.Contains(names, k.interBrokerListener) {
		bad("inter.broker.listener.name", "listener %s is not in listeners", k.interBrokerListener)
	}
	if !slices.ContainsFunc(k.advertised, func(l Listener) bool { return !isController(l.Name) }) {
		bad("advertised.listeners", "a broker needs at least one non-controller listener to advertise")
	}
	return errs
}

// parseProtocolMap parses NAME:PROTOCOL pairs.
func parseProtocolMap(v string) (map[string]string, error) {
	m := map[string]string{}
	for _, pair := range splitList(v) {
		name, proto, ok := strings.Cut(pair, ":")
		name, proto = strings.ToUpper(strings.TrimSpace(name)), strings.ToUpper(strings.TrimSpace(proto))
		if !ok || name == "" || proto == "" {
			return nil, fmt.Errorf("entry %q is not NAME:PROTOCOL", pair)
		}
		switch proto {
		case "PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL":
		default:
			return nil, fmt.Errorf("entry %q: unknown security protocol %s", pair, proto)
		}
		m[name] = proto
	}
	return m, nil
}

// parseListeners parses NAME://host:port entries; the host may be empty or a bracketed IPv6
// address. Names must be unique and every name must have a security protocol.
func parseListeners(v string, protocols map[string]string) ([]Listener, error) {
	var out []Listener
	for _, entry := range splitList(v) {
		name, rest, ok := strings.Cut(entry, "://")
		name = strings.ToUpper(name) // Kafka normalises listener names to upper case
		if !ok || name == "" {
			return nil, fmt.Errorf("entry %q is not NAME://host:port", entry)
		}
		host, port, err := splitHostPort(rest)
		if err != nil {
			return nil, fmt.Errorf("entry %q: %w", entry, err)
		}
		proto, ok := protocols[name]
		if !ok {
			return nil, fmt.Errorf("entry %q: no security protocol for listener %s in listener.security.protocol.map", entry, name)
		}
		for _, prev := range out {
			if prev.Name == name {
				return nil, fmt.Errorf("listener name %s used twice", name)
			}
			if prev.Port == port && port != 0 && !ipv4AndIPv6(prev.Host, host) {
				return nil, fmt.Errorf("listeners %s and %s both use port %d", prev.Name, name, port)
			}
		}
		out = append(out, Listener{Name: name, Host: host, Port: port, Protocol: proto})
	}
	return out, nil
}

// ipv4AndIPv6: Kafka lets two listeners share a port only when one binds an IPv4 literal and
// the other an IPv6 literal.
func ipv4AndIPv6(a, b string) bool {
	ipA, ipB := net.ParseIP(a), net.ParseIP(b)
	if ipA == nil || ipB == nil {
		return false
	}
	return (ipA.To4() == nil) != (ipB.To4() == nil)
}

func splitHostPort(s string) (string, int, error) {
	host, portText, err := net.SplitHostPort(strings.TrimSpace(s))
	if err != nil {
		return "", 0, fmt.Errorf("%q is not host:port", s)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("%q: port must be 0..65535", s)
	}
	return host, port, nil
}

// parseVoters parses id@host:port entries with unique ids.
func parseVoters(v string) ([]Voter, error) {
	var out []Voter
	for _, entry := range splitList(v) {
		idText, addr, ok := strings.Cut(entry, "@")
		if !ok {
			return nil, fmt.Errorf("entry %q is not id@host:port", entry)
		}
		id, err := strconv.ParseInt(idText, 10, 32)
		if err != nil || id < 0 {
			return nil, fmt.Errorf("entry %q: id must be a non-negative integer", entry)
		}
		host, port, err := splitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("entry %q: %w", entry, err)
		}
		if host == "" || port == 0 {
			return nil, fmt.Errorf("entry %q: a voter needs a host and a port", entry)
		}
		if slices.ContainsFunc(out, func(o Voter) bool { return o.ID == int32(id) }) {
			return nil, fmt.Errorf("voter id %d listed twice", id)
		}
		out = append(out, Voter{ID: int32(id), Host: host, Port: port})
	}
	return out, nil
}
