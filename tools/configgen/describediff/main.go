// Command describediff compares Sluice's DescribeConfigs entries with a real Kafka broker's:
// it describes the broker and a topic on the broker at -bootstrap, builds Sluice's entries from
// the same server.properties and topic configs, and prints every difference. It is the check to
// run after regenerating the key table (see docs/configuration.md); a Kafka broker comes from
// bench/kafka-ref.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/config"
)

func main() {
	bootstrap := flag.String("bootstrap", "", "Kafka broker host:port")
	props := flag.String("props", "", "the broker's server.properties")
	topic := flag.String("topic", "describediff", "topic to create and describe")
	dynDefault := flag.String("dynamic-default", "", "k=v,... to set as cluster-wide dynamic broker defaults first")
	flag.Parse()
	if err := run(*bootstrap, *props, *topic, parsePairs(*dynDefault)); err != nil {
		slog.Error("describediff failed", "err", err)
		os.Exit(1)
	}
}

func parsePairs(s string) map[string]string {
	m := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

func run(bootstrap, props, topic string, dynDefault map[string]string) error {
	cfg, err := config.Load(props, nil)
	if err != nil {
		return fmt.Errorf("sluice refuses the broker's properties: %w", err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	if len(dynDefault) > 0 {
		if cfg, err = setDynamicDefaults(ctx, cl, cfg, dynDefault); err != nil {
			return err
		}
	}

	overrides := map[string]string{"retention.ms": "123456", "cleanup.policy": "compact", "max.message.bytes": "2048"}
	create := kmsg.NewPtrCreateTopicsRequest()
	ct := kmsg.NewCreateTopicsRequestTopic()
	ct.Topic, ct.NumPartitions, ct.ReplicationFactor = topic, 1, 1
	for k, v := range overrides {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = k, kmsg.StringPtr(v)
		ct.Configs = append(ct.Configs, c)
	}
	create.Topics = append(create.Topics, ct)
	if _, err := create.RequestWith(ctx, cl); err != nil {
		return fmt.Errorf("create topic: %w", err)
	}

	req := kmsg.NewPtrDescribeConfigsRequest()
	req.IncludeSynonyms, req.IncludeDocumentation = true, true
	b := kmsg.NewDescribeConfigsRequestResource()
	b.ResourceType, b.ResourceName = kmsg.ConfigResourceTypeBroker, strconv.Itoa(int(cfg.NodeID()))
	tr := kmsg.NewDescribeConfigsRequestResource()
	tr.ResourceType, tr.ResourceName = kmsg.ConfigResourceTypeTopic, topic
	req.Resources = append(req.Resources, b, tr)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("describe: %w", err)
	}
	diffs := 0
	for _, r := range resp.Resources {
		var ours []config.ConfigEntry
		if r.ResourceType == kmsg.ConfigResourceTypeBroker {
			ours = cfg.DescribeBroker(nil)
		} else {
			ours = cfg.DescribeTopic(overrides, nil)
		}
		diffs += compare(r.ResourceType.String(), r.Configs, ours)
	}
	fmt.Printf("%d differences\n", diffs)
	return nil
}

// setDynamicDefaults sets cluster-wide broker defaults on Kafka and the same layer on Sluice's
// config. Kafka applies them asynchronously, so it waits a moment before describing.
func setDynamicDefaults(ctx context.Context, cl *kgo.Client, cfg *config.Config, values map[string]string) (*config.Config, error) {
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType = kmsg.ConfigResourceTypeBroker
	for k, v := range values {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value, c.Op = k, kmsg.StringPtr(v), kmsg.IncrementalAlterConfigOpSet
		r.Configs = append(r.Configs, c)
	}
	req.Resources = append(req.Resources, r)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("incremental alter configs: %w", err)
	}
	for _, res := range resp.Resources {
		if res.ErrorCode != 0 {
			return nil, fmt.Errorf("incremental alter configs: error %d %s", res.ErrorCode, show(res.ErrorMessage))
		}
	}
	time.Sleep(2 * time.Second)
	return cfg.WithDynamic(nil, values)
}

func compare(kind string, theirs []kmsg.DescribeConfigsResponseResourceConfig, ours []config.ConfigEntry) int {
	byName := map[string]config.ConfigEntry{}
	for _, e := range ours {
		byName[e.Name] = e
	}
	diffs := 0
	report := func(format string, args ...any) {
		diffs++
		fmt.Printf("%s: %s\n", kind, fmt.Sprintf(format, args...))
	}
	seen := map[string]bool{}
	for _, k := range theirs {
		seen[k.Name] = true
		o, ok := byName[k.Name]
		if !ok {
			report("%s: Kafka lists it, Sluice does not", k.Name)
			continue
		}
		if show(k.Value) != show(o.Value) || k.Source != o.Source || k.ReadOnly != o.ReadOnly ||
			k.IsSensitive != o.Sensitive || k.ConfigType != o.Type {
			report("%s: kafka %s %v ro=%v sens=%v %v | sluice %s %v ro=%v sens=%v %v", k.Name,
				show(k.Value), k.Source, k.ReadOnly, k.IsSensitive, k.ConfigType,
				show(o.Value), o.Source, o.ReadOnly, o.Sensitive, o.Type)
		}
		if a, b := kafkaSynonyms(k.ConfigSynonyms), sluiceSynonyms(o.Synonyms); a != b {
			report("%s synonyms: kafka [%s] | sluice [%s]", k.Name, a, b)
		}
	}
	for _, o := range ours {
		if !seen[o.Name] {
			report("%s: Sluice lists it, Kafka does not", o.Name)
		}
	}
	return diffs
}

func show(p *string) string {
	if p == nil {
		return "<null>"
	}
	return strconv.Quote(*p)
}

func kafkaSynonyms(s []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym) string {
	var parts []string
	for _, x := range s {
		parts = append(parts, fmt.Sprintf("%s=%s/%v", x.Name, show(x.Value), x.Source))
	}
	return strings.Join(parts, " ")
}

func sluiceSynonyms(s []config.Synonym) string {
	var parts []string
	for _, x := range s {
		parts = append(parts, fmt.Sprintf("%s=%s/%v", x.Name, show(x.Value), x.Source))
	}
	return strings.Join(parts, " ")
}
