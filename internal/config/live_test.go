package config

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TestLiveBrokerKeysAreKafkaDynamic: a key Sluice applies live must be one
// Kafka lets AlterConfigs change; Kafka's read-only keys are refused first.
func TestLiveBrokerKeysAreKafkaDynamic(t *testing.T) {
	defs := indexKeys(append(brokerKeyDefs(), replicationThrottleKeyDefs()...))
	for _, k := range LiveBrokerKeys() {
		d, ok := defs[k]
		if !ok || (d.Update != UpdateClusterWide && d.Update != UpdatePerBroker) {
			t.Errorf("%s is live in Sluice but not dynamically updatable in Kafka (%v)", k, d.Update)
		}
	}
}

func TestCheckBrokerUpdate(t *testing.T) {
	c := Defaults()
	for _, tc := range []struct {
		name           string
		configs        map[string]string
		clusterDefault bool
		want           string // "" accepted
	}{
		{"live per broker", map[string]string{"log.retention.ms": "1000", "message.max.bytes": "2000000"}, false, ""},
		{"live cluster default", map[string]string{"log.segment.bytes": "2097152"}, true, ""},
		{"read-only, Kafka's words", map[string]string{"log.retention.hours": "5", "log.dirs": "/x"}, false,
			"Cannot update these configs dynamically: [log.dirs, log.retention.hours]"},
		{"a topic key on a broker", map[string]string{"retention.ms": "5"}, true,
			"Cannot update these configs dynamically, Sluice does not know them as broker configs: [retention.ms]"},
		{"per-broker key as the default, Kafka's words", map[string]string{"listeners": "PLAINTEXT://:9092"}, true,
			"Cannot update these configs at default cluster level, broker id must be specified: [listeners]"},
		{"Kafka-dynamic, not applied by Sluice", map[string]string{"listeners": "PLAINTEXT://:9092", "num.io.threads": "4", "log.retention.ms": "1"}, false,
			"Cannot update these configs dynamically, Sluice does not apply them without a restart: [listeners, num.io.threads]"},
		{"passwords", map[string]string{"sasl.jaas.config": "y"}, false,
			"Cannot update these configs dynamically, Sluice does not apply them without a restart: [sasl.jaas.config]"},
		// Kafka 4.4.0 (bench/kafka-ref) refuses an SSL key without its listener prefix before
		// anything but the read-only keys, at the default and for one broker alike.
		{"SSL keys need the listener prefix", map[string]string{"ssl.keystore.password": "x", "ssl.keystore.location": "/k", "num.io.threads": "4"}, true,
			"These security configs can be dynamically updated only per-listener using the listener prefix: [ssl.keystore.location, ssl.keystore.password]"},
		{"keys Kafka does not define", map[string]string{"listener.name.plaintext.ssl.key.password": "x", "my.plugin.key": "1"}, true,
			"Cannot update these configs dynamically, Sluice does not know them as broker configs: [listener.name.plaintext.ssl.key.password, my.plugin.key]"},
		{"read-only reported before the rest", map[string]string{"log.dirs": "/x", "listeners": "PLAINTEXT://:1"}, false,
			"Cannot update these configs dynamically: [log.dirs]"},
		{"cluster default only", map[string]string{"unclean.leader.election.enable": "true"}, false,
			"Sluice applies these configs only as the cluster-wide default (empty broker name): [unclean.leader.election.enable]"},
		{"cluster default", map[string]string{"unclean.leader.election.enable": "true"}, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := c.CheckBrokerUpdate(tc.configs, tc.clusterDefault)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want == "":
			case err == nil:
				t.Fatalf("accepted, want %q", tc.want)
			case err.Error() != tc.want || !errors.Is(err, kerr.InvalidRequest):
				t.Fatalf("got %q (INVALID_REQUEST: %t), want %q", err, errors.Is(err, kerr.InvalidRequest), tc.want)
			}
		})
	}
}
