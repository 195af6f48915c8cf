package config

import (
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
)

// liveBrokerKeys are the dynamic broker keys a running node applies when
// AlterConfigs changes them; true marks a key applied only as the
// cluster-wide default (empty broker name). They are the broker synonyms of
// the topic settings the broker pushes to its partitions and logs
// (broker.TopicSettings over WithDynamic and ResolveTopic, per broker and
// cluster default); unclean.leader.election.enable, which the controller
// reads from the cluster default only; and the keys internal/node's
// dynconfig.go appliers hand to running components (the log cleaner, the
// connection limits). Every other key is refused on a broker resource
// rather than stored and ignored; add a key here when a package starts
// applying it live (register an applier in internal/node/dynconfig.go).
func liveBrokerKeys() map[string]bool {
	return map[string]bool{
		"log.cleaner.backoff.ms":              false,
		"log.cleaner.dedupe.buffer.size":      false,
		"log.cleaner.delete.retention.ms":     false,
		"log.cleaner.io.buffer.load.factor":   false,
		"log.cleaner.io.buffer.size":          false,
		"log.cleaner.io.max.bytes.per.second": false,
		"log.cleaner.max.compaction.lag.ms":   false,
		"log.cleaner.min.cleanable.ratio":     false,
		"log.cleaner.min.compaction.lag.ms":   false,
		"log.cleaner.threads":                 false,
		"log.cleanup.policy":                  false,
		"log.flush.interval.messages":         false,
		"log.flush.interval.ms":               false,
		"log.index.interval.bytes":            false,
		"log.index.size.max.bytes":            false,
		"log.message.timestamp.after.max.ms":  false,
		"log.message.timestamp.before.max.ms": false,
		"log.message.timestamp.type":          false,
		"log.retention.bytes":                 false,
		"log.retention.ms":                    false,
		"log.roll.jitter.ms":                  false,
		"log.roll.ms":                         false,
		"log.segment.bytes":                   false,
		"log.segment.delete.delay.ms":         false,
		"max.connections":                     false,
		"max.connections.per.ip":              false,
		"max.connections.per.ip.overrides":    false,
		"message.max.bytes":                   false,
		"min.insync.replicas":                 false,
		"num.replica.fetchers":                false,
		"leader.replication.throttled.rate":   false,
		"follower.replication.throttled.rate": false,
		"unclean.leader.election.enable":      true,
	}
}

// LiveBrokerKeys lists the keys a dynamic broker config may set, sorted.
func LiveBrokerKeys() []string { return slices.Sorted(maps.Keys(liveBrokerKeys())) }

// LiveBrokerKey reports whether a running node applies a dynamic change of
// key, and whether only as the cluster-wide default.
func LiveBrokerKey(key string) (live, clusterDefaultOnly bool) {
	clusterDefaultOnly, live = liveBrokerKeys()[key]
	return live, clusterDefaultOnly
}

// InvalidBrokerUpdateError is a dynamic broker config change refused as
// Kafka refuses one it cannot apply (ConfigAdminManager turns
// DynamicBrokerConfig's ConfigException into INVALID_REQUEST): the message
// is meant for the response and names every key at fault.
type InvalidBrokerUpdateError struct{ Msg string }

func (e *InvalidBrokerUpdateError) Error() string { return e.Msg }

// Unwrap lets the controller pick the response's error code.
func (e *InvalidBrokerUpdateError) Unwrap() error { return kerr.InvalidRequest }

// listenerOnlySecurityKeys are Kafka's DynamicSecurityConfigs (SslConfigs.RECONFIGURABLE_CONFIGS):
// dynamically they may only be set with a listener.name.<listener>. prefix, which
// DynamicBrokerConfig.validateConfigs checks right after the read-only keys.
var listenerOnlySecurityKeys = map[string]bool{
	"ssl.keystore.type": true, "ssl.keystore.location": true, "ssl.keystore.password": true,
	"ssl.key.password": true, "ssl.truststore.type": true, "ssl.truststore.location": true,
	"ssl.truststore.password": true, "ssl.keystore.certificate.chain": true, "ssl.keystore.key": true,
	"ssl.truststore.certificates": true,
}

// CheckBrokerUpdate checks the keys of a broker resource's dynamic config
// set (clusterDefault: the resource named ""). Kafka's checks come first,
// in Kafka's order and words (DynamicBrokerConfig.validateConfigs): keys
// that are not dynamically updatable, SSL keys without a listener prefix,
// then per-broker keys set as the cluster default. Then Sluice's: a key Kafka updates dynamically that a
// running Sluice node would not apply, and a key Kafka does not define
// (Kafka stores those for plugins), are refused too rather than stored and
// reported as set. Values are WithDynamic's to check.
func (c *Config) CheckBrokerUpdate(configs map[string]string, clusterDefault bool) error {
	var readOnly, security, perBroker, restart, unknown, defaultOnly []string
	for _, k := range slices.Sorted(maps.Keys(configs)) {
		d, known := c.brokerDefs[k]
		live, onlyDefault := LiveBrokerKey(k)
		switch {
		case known && (d.Update == UpdateReadOnly || d.Update == UpdateTopic):
			readOnly = append(readOnly, k)
		case listenerOnlySecurityKeys[k]:
			security = append(security, k)
		case known && d.Update == UpdatePerBroker && clusterDefault:
			perBroker = append(perBroker, k)
		case !known:
			unknown = append(unknown, k)
		case !live:
			restart = append(restart, k)
		case onlyDefault && !clusterDefault:
			defaultOnly = append(defaultOnly, k)
		}
	}
	refuse := func(msg string, keys []string) error {
		return &InvalidBrokerUpdateError{Msg: msg + ": [" + strings.Join(keys, ", ") + "]"}
	}
	switch {
	case len(readOnly) > 0:
		return refuse("Cannot update these configs dynamically", readOnly)
	case len(security) > 0:
		return refuse("These security configs can be dynamically updated only per-listener using the listener prefix", security)
	case len(perBroker) > 0:
		return refuse("Cannot update these configs at default cluster level, broker id must be specified", perBroker)
	case len(restart) > 0:
		return refuse("Cannot update these configs dynamically, Sluice does not apply them without a restart", restart)
	case len(unknown) > 0:
		return refuse("Cannot update these configs dynamically, Sluice does not know them as broker configs", unknown)
	case len(defaultOnly) > 0:
		return refuse("Sluice applies these configs only as the cluster-wide default (empty broker name)", defaultOnly)
	}
	return nil
}
