package controller

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/metadata"
)

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }

// configResource checks that a request's resource exists and maps it to ours.
func configResource(im *metadata.Image, t kmsg.ConfigResourceType, name string) (metadata.ConfigResource, *kerr.Error, string) {
	switch t {
	case kmsg.ConfigResourceTypeTopic:
		if err := validateTopicName(name); err != nil {
			return metadata.ConfigResource{}, kerr.InvalidTopicException, err.Error()
		}
		if _, ok := im.Topic(name); !ok {
			return metadata.ConfigResource{}, kerr.UnknownTopicOrPartition, ""
		}
		return metadata.ConfigResource{Type: metadata.ConfigResourceTopic, Name: name}, nil, ""
	case kmsg.ConfigResourceTypeBroker:
		// "" is the cluster-wide default; otherwise a broker id.
		if name != "" {
			if _, err := strconv.ParseInt(name, 10, 32); err != nil {
				return metadata.ConfigResource{}, kerr.InvalidRequest, "broker resource name must be a broker id or empty, got " + strconv.Quote(name)
			}
		}
		return metadata.ConfigResource{Type: metadata.ConfigResourceBroker, Name: name}, nil, ""
	case kmsg.ConfigResourceTypeGroupConfig:
		return groupConfigResource(name)
	default:
		return metadata.ConfigResource{}, kerr.InvalidRequest, fmt.Sprintf("unsupported resource type %d", t)
	}
}

// policyErrorCode is the code of a refused config set: the *kerr.Error the
// policy's error wraps (Kafka refuses a broker change it cannot apply with
// INVALID_REQUEST), else INVALID_CONFIG.
func policyErrorCode(err error) *kerr.Error {
	var code *kerr.Error
	if errors.As(err, &code) {
		return code
	}
	return kerr.InvalidConfig
}

// configDiff turns the wanted final configs of a resource into records.
func configDiff(res metadata.ConfigResource, before, after map[string]string) []metadata.Record {
	var recs []metadata.Record
	for _, k := range sortedKeys(before) {
		if _, ok := after[k]; !ok {
			recs = append(recs, &metadata.ConfigRecord{ResourceType: res.Type, ResourceName: res.Name, Name: k})
		}
	}
	for _, k := range sortedKeys(after) {
		if old, ok := before[k]; !ok || old != after[k] {
			v := after[k]
			recs = append(recs, &metadata.ConfigRecord{ResourceType: res.Type, ResourceName: res.Name, Name: k, Value: &v})
		}
	}
	return recs
}

func splitList(v string) []string {
	if strings.TrimSpace(v) == "" {
		return nil
	}
	parts := strings.Split(v, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

// IncrementalAlterConfigs computes the records and response of an
// IncrementalAlterConfigs request (SET, DELETE, APPEND, SUBTRACT per key).
func (c *Controller) IncrementalAlterConfigs(im *metadata.Image, req *kmsg.IncrementalAlterConfigsRequest) ([]metadata.Record, *kmsg.IncrementalAlterConfigsResponse) {
	resp := kmsg.NewPtrIncrementalAlterConfigsResponse()
	resp.Version = req.Version
	var records []metadata.Record
	for _, r := range req.Resources {
		rr := kmsg.NewIncrementalAlterConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = r.ResourceType, r.ResourceName
		recs, err, msg := c.incrementalAlter(im, r)
		if err != nil {
			rr.ErrorCode, rr.ErrorMessage = errMessage(err, msg)
		} else if !req.ValidateOnly {
			records = append(records, recs...)
		}
		resp.Resources = append(resp.Resources, rr)
	}
	return records, resp
}

func (c *Controller) incrementalAlter(im *metadata.Image, r kmsg.IncrementalAlterConfigsRequestResource) ([]metadata.Record, *kerr.Error, string) {
	if r.ResourceType == kmsg.ConfigResourceTypeGroupConfig {
		return c.incrementalAlterGroup(im, r)
	}
	res, kerrErr, msg := configResource(im, r.ResourceType, r.ResourceName)
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
		value := ""
		if cfg.Value != nil {
			value = *cfg.Value
		}
		switch cfg.Op {
		case kmsg.IncrementalAlterConfigOpSet:
			if cfg.Value == nil {
				return nil, kerr.InvalidRequest, "null value not supported for SET of " + cfg.Name
			}
			after[cfg.Name] = value
		case kmsg.IncrementalAlterConfigOpDelete:
			delete(after, cfg.Name)
		case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
			if !c.opts.Configs.IsList(res.Type, cfg.Name) {
				return nil, kerr.InvalidConfig, "config value append is not allowed for config key: " + cfg.Name
			}
			current, ok := after[cfg.Name]
			if !ok {
				current = c.opts.Configs.Default(res.Type, cfg.Name)
			}
			list := splitList(current)
			for _, item := range splitList(value) {
				if cfg.Op == kmsg.IncrementalAlterConfigOpAppend {
					if !slices.Contains(list, item) {
						list = append(list, item)
					}
				} else {
					list = slices.DeleteFunc(list, func(s string) bool { return s == item })
				}
			}
			after[cfg.Name] = strings.Join(list, ",")
		default:
			return nil, kerr.InvalidRequest, fmt.Sprintf("unknown config operation %d for %s", cfg.Op, cfg.Name)
		}
	}
	if err := c.opts.Configs.Validate(res, after); err != nil {
		return nil, policyErrorCode(err), err.Error()
	}
	return configDiff(res, before, after), nil, ""
}

// AlterConfigs computes the records and response of the legacy AlterConfigs
// request, which replaces a resource's whole explicit config set.
func (c *Controller) AlterConfigs(im *metadata.Image, req *kmsg.AlterConfigsRequest) ([]metadata.Record, *kmsg.AlterConfigsResponse) {
	resp := kmsg.NewPtrAlterConfigsResponse()
	resp.Version = req.Version
	var records []metadata.Record
	for _, r := range req.Resources {
		rr := kmsg.NewAlterConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = r.ResourceType, r.ResourceName
		recs, err, msg := c.alterAll(im, r)
		if err != nil {
			rr.ErrorCode, rr.ErrorMessage = errMessage(err, msg)
		} else if !req.ValidateOnly {
			records = append(records, recs...)
		}
		resp.Resources = append(resp.Resources, rr)
	}
	return records, resp
}

func (c *Controller) alterAll(im *metadata.Image, r kmsg.AlterConfigsRequestResource) ([]metadata.Record, *kerr.Error, string) {
	res, kerrErr, msg := configResource(im, r.ResourceType, r.ResourceName)
	if kerrErr != nil {
		return nil, kerrErr, msg
	}
	after := map[string]string{}
	for _, cfg := range r.Configs {
		if _, dup := after[cfg.Name]; dup {
			return nil, kerr.InvalidRequest, "duplicate config key " + cfg.Name
		}
		if cfg.Value == nil {
			return nil, kerr.InvalidRequest, "null value not supported for " + cfg.Name
		}
		after[cfg.Name] = *cfg.Value
	}
	if err := c.opts.Configs.Validate(res, after); err != nil {
		return nil, policyErrorCode(err), err.Error()
	}
	return configDiff(res, im.Configs(res), after), nil, ""
}
