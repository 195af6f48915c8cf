package api

// The BROKER_LOGGER config resource (KIP-412): a node's loggers ("root" and
// one per component) and their levels, described and changed at run time
// by DescribeConfigs and IncrementalAlterConfigs on the node that receives
// the request (never forwarded to the controller), as Kafka's
// ConfigHelper and RuntimeLoggerManager do. Legacy AlterConfigs refuses
// the resource type, as Kafka does.

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/logging"
)

// describeBrokerLoggers answers one BROKER_LOGGER resource: every logger
// with its effective level, or those named.
func describeBrokerLoggers(loggers *logging.Levels, self int32, r kmsg.DescribeConfigsRequestResource) ([]kmsg.DescribeConfigsResponseResourceConfig, int16, *string) {
	switch id, err := strconv.Atoi(r.ResourceName); {
	case loggers == nil:
		return nil, kerr.InvalidRequest.Code, stringPtr("unsupported resource type " + r.ResourceType.String())
	case r.ResourceName == "":
		return nil, kerr.InvalidRequest.Code, stringPtr("Broker id must not be empty")
	case err != nil:
		return nil, kerr.InvalidRequest.Code, stringPtr("Broker id must be an integer, but it is: " + r.ResourceName)
	case int32(id) != self:
		return nil, kerr.InvalidRequest.Code, stringPtr(fmt.Sprintf("Unexpected broker id, expected %d but received %s", self, r.ResourceName))
	}
	var out []kmsg.DescribeConfigsResponseResourceConfig
	for _, l := range loggers.Loggers() {
		// Kafka lists every logger for a null or an empty name list.
		if len(r.ConfigNames) > 0 && !slices.Contains(r.ConfigNames, l.Name) {
			continue
		}
		c := kmsg.NewDescribeConfigsResponseResourceConfig()
		c.Name, c.Value = l.Name, stringPtr(logging.LevelName(l.Level))
		c.Source = kmsg.ConfigSourceDynamicBrokerLoggerConfig
		out = append(out, c)
	}
	return out, 0, nil
}

// alterBrokerLoggers takes the BROKER_LOGGER resources out of req and
// answers them here: all of a resource's operations are checked before any
// applies, and validate_only applies none.
func alterBrokerLoggers(loggers *logging.Levels, self int32, req *kmsg.IncrementalAlterConfigsRequest) (*kmsg.IncrementalAlterConfigsRequest, []kmsg.IncrementalAlterConfigsResponseResource) {
	if loggers == nil {
		return req, nil
	}
	rest := *req
	rest.Resources = nil
	var answered []kmsg.IncrementalAlterConfigsResponseResource
	for _, r := range req.Resources {
		if r.ResourceType != kmsg.ConfigResourceTypeBrokerLogger {
			rest.Resources = append(rest.Resources, r)
			continue
		}
		rr := kmsg.NewIncrementalAlterConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = r.ResourceType, r.ResourceName
		if err := alterLoggerResource(loggers, self, r, req.ValidateOnly); err != nil {
			rr.ErrorCode, rr.ErrorMessage = loggerErrorCode(err), stringPtr(err.Error())
		}
		answered = append(answered, rr)
	}
	return &rest, answered
}

// loggerError carries Kafka's error code with its message.
type loggerError struct {
	code int16
	msg  string
}

func (e *loggerError) Error() string { return e.msg }

func invalidRequest(format string, args ...any) error {
	return &loggerError{kerr.InvalidRequest.Code, fmt.Sprintf(format, args...)}
}

func invalidConfig(format string, args ...any) error {
	return &loggerError{kerr.InvalidConfig.Code, fmt.Sprintf(format, args...)}
}

func loggerErrorCode(err error) int16 {
	if le, ok := errors.AsType[*loggerError](err); ok {
		return le.code
	}
	return kerr.UnknownServerError.Code
}

func alterLoggerResource(loggers *logging.Levels, self int32, r kmsg.IncrementalAlterConfigsRequestResource, validateOnly bool) error {
	if err := checkLoggerOps(r.Configs); err != nil {
		return err
	}
	id, err := strconv.Atoi(r.ResourceName)
	if err != nil {
		return invalidRequest("Node id must be an integer, but it is: %s", r.ResourceName)
	}
	if int32(id) != self {
		return invalidRequest("Unexpected node id. Expected %d, but received %s", self, r.ResourceName)
	}
	for _, op := range r.Configs {
		if err := checkLoggerOp(loggers, op); err != nil {
			return err
		}
	}
	if validateOnly {
		return nil
	}
	for _, op := range r.Configs {
		var err error
		if op.Op == kmsg.IncrementalAlterConfigOpDelete {
			err = loggers.UnsetLevel(op.Name)
		} else {
			err = loggers.SetLevel(op.Name, *op.Value)
		}
		if err != nil {
			return invalidConfig("%v", err)
		}
	}
	return nil
}

// checkLoggerOps refuses duplicate names and null values outside DELETE,
// as Kafka's ConfigAdminManager does before any resource type's checks.
func checkLoggerOps(ops []kmsg.IncrementalAlterConfigsRequestResourceConfig) error {
	seen := map[string]bool{}
	var nulls []string
	for _, op := range ops {
		if seen[op.Name] {
			return invalidRequest("Error due to duplicate config keys")
		}
		seen[op.Name] = true
		if op.Op != kmsg.IncrementalAlterConfigOpDelete && op.Value == nil {
			nulls = append(nulls, op.Name)
		}
	}
	if len(nulls) > 0 {
		return invalidRequest("Null value not supported for : %s", strings.Join(nulls, ", "))
	}
	return nil
}

// checkLoggerOp is Kafka's RuntimeLoggerManager.validateLogLevelConfigs
// for one operation.
func checkLoggerOp(loggers *logging.Levels, op kmsg.IncrementalAlterConfigsRequestResourceConfig) error {
	switch op.Op {
	case kmsg.IncrementalAlterConfigOpSet:
		if !loggers.Exists(op.Name) {
			return invalidConfig("Logger %s does not exist!", op.Name)
		}
		if !logging.IsLevelName(*op.Value) {
			return invalidConfig("Cannot set the log level of %s to %s as it is not a supported log level. Valid log levels are %s",
				op.Name, *op.Value, logging.ValidLevels())
		}
	case kmsg.IncrementalAlterConfigOpDelete:
		if !loggers.Exists(op.Name) {
			return invalidConfig("Logger %s does not exist!", op.Name)
		}
		if op.Name == logging.RootLogger {
			return invalidRequest("Removing the log level of the %s logger is not allowed", logging.RootLogger)
		}
	case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
		return invalidRequest("%s operation is not allowed for the BROKER_LOGGER resource", op.Op)
	default:
		return invalidRequest("Unknown operation type %d is not allowed for the BROKER_LOGGER resource", int8(op.Op))
	}
	return nil
}

// refuseLegacyBrokerLoggers answers the BROKER_LOGGER resources of a legacy
// AlterConfigs as Kafka does: its preprocessing knows no such type.
func refuseLegacyBrokerLoggers(req *kmsg.AlterConfigsRequest) (*kmsg.AlterConfigsRequest, []kmsg.AlterConfigsResponseResource) {
	rest := *req
	rest.Resources = nil
	var refused []kmsg.AlterConfigsResponseResource
	for _, r := range req.Resources {
		if r.ResourceType != kmsg.ConfigResourceTypeBrokerLogger {
			rest.Resources = append(rest.Resources, r)
			continue
		}
		rr := kmsg.NewAlterConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = r.ResourceType, r.ResourceName
		rr.ErrorCode = kerr.InvalidRequest.Code
		rr.ErrorMessage = stringPtr(fmt.Sprintf("Unknown resource type %d", int8(r.ResourceType)))
		refused = append(refused, rr)
	}
	return &rest, refused
}

// nodeIDOf is cfg's node.id, or -1 without a configuration (handler tests
// building only the admin handlers).
func nodeIDOf(cfg *config.Config) int32 {
	if cfg == nil {
		return -1
	}
	return cfg.NodeID()
}
