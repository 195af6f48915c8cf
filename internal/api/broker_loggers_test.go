package api

import (
	"bytes"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/logging"
)

func testLoggers(t *testing.T) *logging.Levels {
	t.Helper()
	log, err := logging.New(&bytes.Buffer{}, "text", "INFO")
	if err != nil {
		t.Fatal(err)
	}
	log.With(logging.ComponentKey, "quorum")
	log.With(logging.ComponentKey, "server")
	_, levels := logging.Adopt(log)
	return levels
}

func TestDescribeBrokerLoggers(t *testing.T) {
	levels := testLoggers(t)
	if err := levels.SetLevel("server", "TRACE"); err != nil {
		t.Fatal(err)
	}
	r := kmsg.DescribeConfigsRequestResource{ResourceType: kmsg.ConfigResourceTypeBrokerLogger, ResourceName: "1"}
	configs, code, _ := describeBrokerLoggers(levels, 1, r)
	var got []string
	for _, c := range configs {
		got = append(got, c.Name+"="+*c.Value)
		if c.Source != kmsg.ConfigSourceDynamicBrokerLoggerConfig || c.ReadOnly || c.IsSensitive {
			t.Errorf("%s: source %v read-only %t sensitive %t", c.Name, c.Source, c.ReadOnly, c.IsSensitive)
		}
	}
	if code != 0 || strings.Join(got, ",") != "root=INFO,quorum=INFO,server=TRACE" {
		t.Fatalf("describe: code %d, %v", code, got)
	}
	r.ConfigNames = []string{} // Kafka lists every logger for an empty list too
	if configs, _, _ := describeBrokerLoggers(levels, 1, r); len(configs) != 3 {
		t.Errorf("describe with an empty name list: %d loggers, want 3", len(configs))
	}
	r.ConfigNames = []string{"server", "nope"}
	if configs, _, _ := describeBrokerLoggers(levels, 1, r); len(configs) != 1 || configs[0].Name != "server" {
		t.Errorf("describe by name: %+v", configs)
	}
	for name, want := range map[string]string{
		"":  "Broker id must not be empty",
		"x": "Broker id must be an integer, but it is: x",
		"2": "Unexpected broker id, expected 1 but received 2",
	} {
		r := kmsg.DescribeConfigsRequestResource{ResourceType: kmsg.ConfigResourceTypeBrokerLogger, ResourceName: name}
		if _, code, msg := describeBrokerLoggers(levels, 1, r); code != kerr.InvalidRequest.Code || msg == nil || *msg != want {
			t.Errorf("describe %q: %d %v, want INVALID_REQUEST %q", name, code, msg, want)
		}
	}
}

func loggerOp(op kmsg.IncrementalAlterConfigOp, name string, value *string) kmsg.IncrementalAlterConfigsRequestResourceConfig {
	return kmsg.IncrementalAlterConfigsRequestResourceConfig{Name: name, Op: op, Value: value}
}

func TestAlterBrokerLoggers(t *testing.T) {
	levels := testLoggers(t)
	debug, loud := stringPtr("DEBUG"), stringPtr("LOUD")
	set, del := kmsg.IncrementalAlterConfigOpSet, kmsg.IncrementalAlterConfigOpDelete
	for _, c := range []struct {
		name     string
		resource string
		ops      []kmsg.IncrementalAlterConfigsRequestResourceConfig
		code     int16
		msg      string
	}{
		{"unknown logger", "1", []kmsg.IncrementalAlterConfigsRequestResourceConfig{loggerOp(set, "nope", debug)}, kerr.InvalidConfig.Code, "Logger nope does not exist!"},
		{"bad level", "1", []kmsg.IncrementalAlterConfigsRequestResourceConfig{loggerOp(set, "server", loud)}, kerr.InvalidConfig.Code,
			"Cannot set the log level of server to LOUD as it is not a supported log level. Valid log levels are DEBUG, ERROR, FATAL, INFO, TRACE, WARN"},
		{"lower case level", "1", []kmsg.IncrementalAlterConfigsRequestResourceConfig{loggerOp(set, "server", stringPtr("debug"))}, kerr.InvalidConfig.Code, "not a supported log level"},
		{"delete root", "1", []kmsg.IncrementalAlterConfigsRequestResourceConfig{loggerOp(del, "root", nil)}, kerr.InvalidRequest.Code, "Removing the log level of the root logger is not allowed"},
		{"append", "1", []kmsg.IncrementalAlterConfigsRequestResourceConfig{loggerOp(kmsg.IncrementalAlterConfigOpAppend, "server", debug)}, kerr.InvalidRequest.Code, "APPEND operation is not allowed for the BROKER_LOGGER resource"},
		{"null value", "1", []kmsg.IncrementalAlterConfigsRequestResourceConfig{loggerOp(set, "server", nil)}, kerr.InvalidRequest.Code, "Null value not supported for : server"},
		{"duplicate", "1", []kmsg.IncrementalAlterConfigsRequestResourceConfig{loggerOp(set, "server", debug), loggerOp(del, "server", nil)}, kerr.InvalidRequest.Code, "Error due to duplicate config keys"},
		{"other node", "2", []kmsg.IncrementalAlterConfigsRequestResourceConfig{loggerOp(set, "server", debug)}, kerr.InvalidRequest.Code, "Unexpected node id. Expected 1, but received 2"},
		{"not a node id", "b", []kmsg.IncrementalAlterConfigsRequestResourceConfig{loggerOp(set, "server", debug)}, kerr.InvalidRequest.Code, "Node id must be an integer, but it is: b"},
		// A refused resource changes nothing, not even its valid operations.
		{"valid then invalid", "1", []kmsg.IncrementalAlterConfigsRequestResourceConfig{loggerOp(set, "quorum", debug), loggerOp(set, "nope", debug)}, kerr.InvalidConfig.Code, "Logger nope does not exist!"},
	} {
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		req.Resources = []kmsg.IncrementalAlterConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeBrokerLogger, ResourceName: c.resource, Configs: c.ops}}
		rest, answered := alterBrokerLoggers(levels, 1, req)
		if len(rest.Resources) != 0 || len(answered) != 1 {
			t.Fatalf("%s: %d left for the controller, %d answered", c.name, len(rest.Resources), len(answered))
		}
		a := answered[0]
		if a.ErrorCode != c.code || a.ErrorMessage == nil || !strings.Contains(*a.ErrorMessage, c.msg) {
			t.Errorf("%s: %d %v, want %d %q", c.name, a.ErrorCode, a.ErrorMessage, c.code, c.msg)
		}
	}
	for _, l := range levels.Loggers() {
		if l.Level != slog.LevelInfo {
			t.Fatalf("refused requests changed %s to %v", l.Name, l.Level)
		}
	}

	// validate_only checks and changes nothing; a topic resource goes on
	// to the controller.
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	req.ValidateOnly = true
	req.Resources = []kmsg.IncrementalAlterConfigsRequestResource{
		{ResourceType: kmsg.ConfigResourceTypeBrokerLogger, ResourceName: "1", Configs: []kmsg.IncrementalAlterConfigsRequestResourceConfig{loggerOp(set, "server", debug)}},
		{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "t"},
	}
	rest, answered := alterBrokerLoggers(levels, 1, req)
	if len(rest.Resources) != 1 || rest.Resources[0].ResourceName != "t" || len(answered) != 1 || answered[0].ErrorCode != 0 {
		t.Fatalf("validate only: rest %+v, answered %+v", rest.Resources, answered)
	}
	if lv := levels.Loggers()[2]; lv.Level != slog.LevelInfo {
		t.Fatalf("validate_only changed %v", lv)
	}

	// SET then DELETE: the component follows root again.
	req.ValidateOnly = false
	req.Resources = req.Resources[:1]
	req.Resources[0].Configs = []kmsg.IncrementalAlterConfigsRequestResourceConfig{loggerOp(set, "server", debug), loggerOp(set, "root", stringPtr("WARN"))}
	if _, answered := alterBrokerLoggers(levels, 1, req); answered[0].ErrorCode != 0 {
		t.Fatalf("set: %+v", answered[0])
	}
	want := []logging.Logger{{Name: "root", Level: slog.LevelWarn}, {Name: "quorum", Level: slog.LevelWarn}, {Name: "server", Level: slog.LevelDebug}}
	if got := levels.Loggers(); !slices.Equal(got, want) {
		t.Fatalf("after set: %v, want %v", got, want)
	}
	req.Resources[0].Configs = []kmsg.IncrementalAlterConfigsRequestResourceConfig{loggerOp(del, "server", nil)}
	if _, answered := alterBrokerLoggers(levels, 1, req); answered[0].ErrorCode != 0 {
		t.Fatalf("delete: %+v", answered[0])
	}
	if got := levels.Loggers()[2]; got.Level != slog.LevelWarn {
		t.Fatalf("after delete: server at %v, want root's WARN", got.Level)
	}
}

func TestLegacyAlterConfigsRefusesBrokerLoggers(t *testing.T) {
	req := kmsg.NewPtrAlterConfigsRequest()
	req.Resources = []kmsg.AlterConfigsRequestResource{
		{ResourceType: kmsg.ConfigResourceTypeBrokerLogger, ResourceName: "1"},
		{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "t"},
	}
	rest, refused := refuseLegacyBrokerLoggers(req)
	if len(rest.Resources) != 1 || rest.Resources[0].ResourceName != "t" {
		t.Fatalf("left for the controller: %+v", rest.Resources)
	}
	if len(refused) != 1 || refused[0].ErrorCode != kerr.InvalidRequest.Code || *refused[0].ErrorMessage != "Unknown resource type 8" {
		t.Fatalf("refused: %+v", refused)
	}
}
