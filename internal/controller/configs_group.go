package controller

// Group configs (the GROUP config resource, type 32): a group's dynamic
// configs, set with IncrementalAlterConfigs or AlterConfigs (Kafka 4.4
// accepts both) on a group that need not exist, validated by the
// ConfigPolicy (Kafka's GroupConfig.validate) and stored as ConfigRecords.
// Kafka does not remove them when the group is deleted by DeleteGroups.

import (
	"fmt"
	"maps"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/metadata"
)

// groupConfigResource maps a group name to its resource; the empty name
// (a cluster-wide default) is refused as Kafka refuses it.
func groupConfigResource(name string) (metadata.ConfigResource, *kerr.Error, string) {
	if name == "" {
		return metadata.ConfigResource{}, kerr.InvalidRequest, "Default group resources are not allowed."
	}
	return metadata.ConfigResource{Type: metadata.ConfigResourceGroup, Name: name}, nil, ""
}

// incrementalAlterGroup applies SET and DELETE to a group's configs with
// Kafka's messages; no group key is a list Kafka lets APPEND or SUBTRACT
// change (its controller refuses both for every group key).
func (c *Controller) incrementalAlterGroup(im *metadata.Image, r kmsg.IncrementalAlterConfigsRequestResource) ([]metadata.Record, *kerr.Error, string) {
	res, kerrErr, msg := groupConfigResource(r.ResourceName)
	if kerrErr != nil {
		return nil, kerrErr, msg
	}
	before := im.Configs(res)
	after := maps.Clone(before)
	if after == nil {
		after = map[string]string{}
	}
	seen := map[string]bool{}
	for _, cfg := range r.Configs {
		if seen[cfg.Name] {
			return nil, kerr.InvalidRequest, "duplicate config key " + cfg.Name
		}
		seen[cfg.Name] = true
		switch cfg.Op {
		case kmsg.IncrementalAlterConfigOpSet:
			if cfg.Value == nil {
				return nil, kerr.InvalidRequest, "Null value not supported for : " + cfg.Name
			}
			after[cfg.Name] = *cfg.Value
		case kmsg.IncrementalAlterConfigOpDelete:
			delete(after, cfg.Name)
		case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
			op := "APPEND"
			if cfg.Op == kmsg.IncrementalAlterConfigOpSubtract {
				op = "SUBTRACT"
			}
			return nil, kerr.InvalidConfig, fmt.Sprintf("Can't %s to key %s because its type is not LIST.", op, cfg.Name)
		default:
			return nil, kerr.InvalidRequest, fmt.Sprintf("unknown config operation %d for %s", cfg.Op, cfg.Name)
		}
	}
	if err := c.opts.Configs.Validate(res, after); err != nil {
		return nil, policyErrorCode(err), err.Error()
	}
	return configDiff(res, before, after), nil, ""
}
