package config

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/magiconair/properties"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// sluiceDefaults are the no-flag defaults where Sluice differs from Kafka: Kafka has no default
// for node.id and process.roles, and its listener defaults do not form a working single node.
// They apply to every key the file and the overrides leave unset.
func sluiceDefaults() map[string]string {
	return map[string]string{
		"process.roles":             "broker,controller",
		"node.id":                   "1",
		"broker.id":                 "1", // node.id's synonym, kept equal to it
		"listeners":                 "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093",
		"controller.listener.names": "CONTROLLER",
		"controller.quorum.voters":  "1@127.0.0.1:9093",
		"log.dirs":                  "./data",
	}
}

// singleNodeDefaults replace Kafka's replication defaults of internal topics (3, 3, 2) when
// the cluster can only ever hold one broker; otherwise the internal topics could not be made.
func singleNodeDefaults() map[string]string {
	return map[string]string{
		"offsets.topic.replication.factor":         "1",
		"transaction.state.log.replication.factor": "1",
		"transaction.state.log.min.isr":            "1",
	}
}

// Config is a validated, immutable broker configuration: Kafka's defaults, Sluice's defaults,
// the static file with overrides, and the dynamic broker layers, in Kafka's precedence order.
type Config struct {
	brokerDefs map[string]KeyDef
	topicDefs  map[string]KeyDef
	// groups maps a broker key to its synonym group (e.g. log.retention.{ms,minutes,hours}).
	groups map[string][]SynonymDef

	defaults    map[string]string // Kafka defaults with Sluice's replacing them
	static      map[string]string // server.properties plus command-line overrides
	dynDefault  map[string]string // cluster-wide dynamic defaults (DYNAMIC_DEFAULT_BROKER_CONFIG)
	dynBroker   map[string]string // this broker's dynamic configs (DYNAMIC_BROKER_CONFIG)
	singleNode  bool
	unknownKeys []string
	kraft       kraftSettings
}

// Defaults returns the configuration of a node started with no --config and no overrides.
// The built-in defaults are validated by the package tests, so an error here is a bug.
func Defaults() *Config {
	c, err := Parse("", nil)
	if err != nil {
		panic(fmt.Sprintf("config: built-in defaults are invalid: %v", err))
	}
	return c
}

// Load reads a Java properties file (path "" means none) and applies overrides on top, as
// `kafka-server-start.sh server.properties --override k=v` does.
func Load(path string, overrides map[string]string) (*Config, error) {
	text := ""
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			// The path error names the file again; one name is enough.
			if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
				err = pe.Err
			}
			return nil, fmt.Errorf("config file %s: %w", path, err)
		}
		text = string(b)
	}
	c, err := Parse(text, overrides)
	if err != nil && path != "" {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	return c, err
}

// Parse is Load on properties text already in memory.
func Parse(text string, overrides map[string]string) (*Config, error) {
	static, err := parseProperties(text)
	if err != nil {
		return nil, err
	}
	for k, v := range overrides {
		static[strings.TrimSpace(k)] = v
	}
	// node.id and broker.id are synonyms in KRaft: Kafka copies whichever is set to the other
	// (KafkaConfig.populateSynonyms) and refuses two different values.
	nodeID, hasNode := static["node.id"]
	brokerID, hasBroker := static["broker.id"]
	switch {
	case hasNode && hasBroker && strings.TrimSpace(nodeID) != strings.TrimSpace(brokerID):
		return nil, fmt.Errorf("configuration broker.id: %q must equal node.id %q", brokerID, nodeID)
	case hasBroker && !hasNode:
		static["node.id"] = brokerID
	case hasNode && !hasBroker:
		static["broker.id"] = nodeID
	}
	c := &Config{
		brokerDefs: indexKeys(append(brokerKeyDefs(), replicationThrottleKeyDefs()...)),
		topicDefs:  indexKeys(topicKeyDefs()),
		static:     static,
		dynDefault: map[string]string{},
		dynBroker:  map[string]string{},
	}
	c.groups = synonymGroups(c.topicDefs)
	c.defaults = map[string]string{}
	for name, d := range c.brokerDefs {
		if !d.Required && !d.DefaultNull {
			c.defaults[name] = d.Default
		}
	}
	maps.Copy(c.defaults, sluiceDefaults())
	if _, ok := static["controller.quorum.bootstrap.servers"]; ok {
		// The file finds the quorum dynamically; a default static voter would contradict it.
		c.defaults["controller.quorum.voters"] = c.brokerDefs["controller.quorum.voters"].Default
	}
	for k := range static {
		if _, ok := c.brokerDefs[k]; !ok {
			c.unknownKeys = append(c.unknownKeys, k)
		}
	}
	slices.Sort(c.unknownKeys)
	if err := c.finish(); err != nil {
		return nil, err
	}
	return c, nil
}

// parseProperties reads Java properties text: ISO-8859-1 with \uXXXX escapes, line
// continuations and both = and : separators, as java.util.Properties.load does. Kafka does
// not expand ${...} in server.properties, so neither do we.
func parseProperties(text string) (map[string]string, error) {
	l := &properties.Loader{Encoding: properties.ISO_8859_1, DisableExpansion: true}
	p, err := l.LoadBytes([]byte(text))
	if err != nil {
		return nil, fmt.Errorf("parsing properties: %w", err)
	}
	out := make(map[string]string, p.Len())
	for _, k := range p.Keys() {
		v, _ := p.Get(k)
		out[k] = v
	}
	return out, nil
}

// synonymGroups maps every broker key that feeds a topic key to that topic key's synonym
// list, so log.retention.hours and log.retention.ms resolve together as in Kafka.
func synonymGroups(topicDefs map[string]KeyDef) map[string][]SynonymDef {
	groups := map[string][]SynonymDef{}
	for _, d := range topicDefs {
		for _, s := range d.Synonyms {
			groups[s.Name] = d.Synonyms
		}
	}
	return groups
}

// finish validates every layer and derives the KRaft settings. All problems are reported
// together, each naming its key.
func (c *Config) finish() error {
	var errs []error
	for _, layer := range []map[string]string{c.static, c.dynDefault, c.dynBroker} {
		for _, k := range slices.Sorted(maps.Keys(layer)) {
			if d, ok := c.brokerDefs[k]; ok {
				if err := validateValue(d, layer[k]); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if err := checkListenerOverrides(c); err != nil {
		return err
	}
	k, err := deriveKRaft(c)
	if err != nil {
		return err
	}
	c.kraft = k
	c.singleNode = k.isSingleNode()
	if c.singleNode {
		for key, v := range singleNodeDefaults() {
			c.defaults[key] = v
		}
	}
	return refuseUnbuiltSecurity(c)
}

// lookup returns the value of a broker key from the highest-precedence layer that sets it.
func (c *Config) lookup(key string) (string, kmsg.ConfigSource, bool) {
	for _, l := range c.layers() {
		if v, ok := l.values[key]; ok {
			return v, l.source, true
		}
	}
	return "", kmsg.ConfigSourceDefaultConfig, false
}

type layer struct {
	values map[string]string
	source kmsg.ConfigSource
}

func (c *Config) layers() []layer {
	return []layer{
		{c.dynBroker, kmsg.ConfigSourceDynamicBrokerConfig},
		{c.dynDefault, kmsg.ConfigSourceDynamicDefaultBrokerConfig},
		{c.static, kmsg.ConfigSourceStaticBrokerConfig},
		{c.defaults, kmsg.ConfigSourceDefaultConfig},
	}
}

// resolved returns the effective value of a broker key. A key heading a synonym group takes
// the first member that is set, converted to its unit (log.retention.ms over .minutes over
// .hours), as KafkaConfig does.
func (c *Config) resolved(key string) (string, bool) {
	group := c.groups[key]
	if len(group) == 0 || group[0].Name != key {
		v, _, ok := c.lookup(key)
		return v, ok
	}
	for _, s := range group {
		v, _, ok := c.lookup(s.Name)
		if !ok {
			continue
		}
		return convertUnit(v, s.Unit), true
	}
	return "", false
}

// convertUnit turns a synonym's value into the topic key's unit; validation already ensured
// the value is a number. Kafka keeps negative values (no limit) as they are.
func convertUnit(v string, u Unit) string {
	factor := int64(1)
	switch u {
	case UnitMinutesToMillis:
		factor = 60_000
	case UnitHoursToMillis:
		factor = 3_600_000
	case UnitSame:
		return v
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return v
	}
	if n < 0 {
		return "-1"
	}
	return strconv.FormatInt(n*factor, 10)
}

// UnknownKeys lists the keys Kafka does not define that the file or overrides (the
// environment's included) set, Sluice's own among them. They are kept and can be read with
// Raw, as Kafka keeps them; CheckKeys tells Sluice's keys from unknown ones.
func (c *Config) UnknownKeys() []string { return slices.Clone(c.unknownKeys) }

// SingleNode reports whether the configuration can only form a one-broker cluster (combined
// roles, this node the only voter), which switches on the single-node defaults.
func (c *Config) SingleNode() bool { return c.singleNode }

// StaticValues returns a copy of the keys set by the file and the overrides.
func (c *Config) StaticValues() map[string]string { return maps.Clone(c.static) }
