package config

import (
	"errors"
	"fmt"
	"maps"
	"slices"
)

// WithDynamic returns a copy of c with the dynamic broker layers the controller stores in the
// metadata log: perBroker for this broker (DYNAMIC_BROKER_CONFIG) and clusterDefault for all
// brokers (DYNAMIC_DEFAULT_BROKER_CONFIG). As in Kafka, only dynamically updatable keys are
// allowed, and per-broker-only keys cannot be set as a cluster-wide default. The error names
// every offending key.
func (c *Config) WithDynamic(perBroker, clusterDefault map[string]string) (*Config, error) {
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(perBroker)) {
		if err := c.checkDynamicKey(k, false); err != nil {
			errs = append(errs, err)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(clusterDefault)) {
		if err := c.checkDynamicKey(k, true); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	n := *c
	// finish writes the single-node defaults into defaults; keep c's map untouched.
	n.defaults = maps.Clone(c.defaults)
	n.dynBroker = maps.Clone(perBroker)
	n.dynDefault = maps.Clone(clusterDefault)
	if n.dynBroker == nil {
		n.dynBroker = map[string]string{}
	}
	if n.dynDefault == nil {
		n.dynDefault = map[string]string{}
	}
	if err := n.finish(); err != nil {
		return nil, inKafkaWords(err)
	}
	if err := n.checkLiveValues(); err != nil {
		return nil, err
	}
	return &n, nil
}

func (c *Config) checkDynamicKey(key string, clusterWide bool) error {
	d, ok := c.brokerDefs[key]
	if !ok {
		return fmt.Errorf("configuration %s: unknown broker configuration", key)
	}
	switch d.Update {
	case UpdateReadOnly, UpdateTopic:
		return fmt.Errorf("configuration %s: read-only, it cannot be updated dynamically", key)
	case UpdatePerBroker:
		if clusterWide {
			return fmt.Errorf("configuration %s: per-broker, it cannot be set as a cluster-wide default", key)
		}
	case UpdateClusterWide:
	}
	return nil
}
