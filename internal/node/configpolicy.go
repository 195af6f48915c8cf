package node

import (
	"strconv"
	"strings"

	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/metadata"
)

// configPolicy is the controller's view of config names, types and defaults,
// answered from internal/config, which owns them.
type configPolicy struct {
	cfg *config.Config
}

// Validate checks a resource's whole explicit config set after a change.
func (p configPolicy) Validate(res metadata.ConfigResource, configs map[string]string) error {
	switch res.Type {
	case metadata.ConfigResourceTopic:
		_, err := p.cfg.ResolveTopic(configs)
		return err
	case metadata.ConfigResourceBroker:
		if res.Name != "" {
			if _, err := strconv.ParseInt(res.Name, 10, 32); err != nil {
				return &config.InvalidTopicConfigError{Msg: "broker resource name " + strconv.Quote(res.Name) + " is not a broker id"}
			}
		}
		return p.validateBroker(configs, res.Name == "")
	case metadata.ConfigResourceGroup:
		return p.cfg.ValidateGroupConfigs(configs)
	default:
		return &config.InvalidTopicConfigError{Msg: "unsupported resource type " + res.Type.String()}
	}
}

// validateBroker refuses, with Kafka's INVALID_REQUEST, a dynamic broker
// set holding a key a running node would not apply (listeners, thread
// counts, passwords...): stored, it would be reported as set and never
// act. The values of the keys left are then checked as the broker reads
// them, through WithDynamic; Kafka answers INVALID_REQUEST for those too.
func (p configPolicy) validateBroker(configs map[string]string, clusterDefault bool) error {
	if err := p.cfg.CheckBrokerUpdate(configs, clusterDefault); err != nil {
		return err
	}
	var err error
	if clusterDefault {
		_, err = p.cfg.WithDynamic(nil, configs)
	} else {
		_, err = p.cfg.WithDynamic(configs, nil)
	}
	if err != nil {
		return &config.InvalidBrokerUpdateError{Msg: strings.ReplaceAll(err.Error(), "\n", "; ")}
	}
	return nil
}

// IsList reports whether a key is a comma-separated list.
func (p configPolicy) IsList(t metadata.ConfigResourceType, name string) bool {
	keys := config.BrokerKeys()
	if t == metadata.ConfigResourceTopic {
		keys = config.TopicKeys()
	}
	for _, k := range keys {
		if k.Name == name {
			return k.Type == config.TypeList
		}
	}
	return false
}

// Default is a key's value when the resource does not set it: for a topic
// the broker's synonym or Kafka's default, for a broker its static value.
func (p configPolicy) Default(t metadata.ConfigResourceType, name string) string {
	var entries []config.ConfigEntry
	if t == metadata.ConfigResourceTopic {
		entries = p.cfg.DescribeTopic(nil, []string{name})
	} else {
		entries = p.cfg.DescribeBroker([]string{name})
	}
	if len(entries) == 0 || entries[0].Value == nil {
		return ""
	}
	return *entries[0].Value
}
