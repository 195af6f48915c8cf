// Command docgen rewrites the generated key tables in docs/configuration.md from
// internal/config's key table and its list of enforced keys, so the documentation cannot drift
// from what Load accepts. tools/configgen/run.sh calls it after regenerating the table.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/sluice-io/sluice/internal/config"
)

const (
	beginMarker = "<!-- BEGIN GENERATED KEY TABLES: tools/configgen/run.sh; do not edit by hand -->"
	endMarker   = "<!-- END GENERATED KEY TABLES -->"
)

func main() {
	doc := flag.String("doc", "docs/configuration.md", "markdown file holding the generated markers")
	flag.Parse()
	if err := rewrite(*doc); err != nil {
		slog.Error("docgen failed", "err", err)
		os.Exit(1)
	}
}

func rewrite(path string) error {
	old, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	begin := bytes.Index(old, []byte(beginMarker))
	end := bytes.Index(old, []byte(endMarker))
	if begin < 0 || end < begin {
		return errors.New(path + " lacks the generated-table markers")
	}
	var b bytes.Buffer
	b.Write(old[:begin+len(beginMarker)])
	b.WriteString("\n")
	writeTables(&b)
	b.Write(old[end:])
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

func writeTables(b *bytes.Buffer) {
	defaults := map[string]string{}
	for _, e := range config.Defaults().DescribeBroker(nil) {
		if e.Value != nil {
			defaults[e.Name] = *e.Value
		}
	}
	fmt.Fprintf(b, "\nGenerated from Apache Kafka %s. Internal keys are accepted too but not listed, as\nDescribeConfigs does not list them.\n", config.KafkaVersion)

	fmt.Fprintf(b, "\n### Broker keys\n\n")
	fmt.Fprintf(b, "| Key | Type | Kafka default | Sluice default (no-flag node) | Update mode | Enforced by Sluice |\n")
	fmt.Fprintf(b, "|---|---|---|---|---|---|\n")
	var custom []string
	for _, d := range config.BrokerKeys() {
		if d.Internal {
			continue
		}
		kafkaDefault := renderDefault(d)
		sluiceDefault := ""
		if v, ok := defaults[d.Name]; ok && v != d.Default && !d.Sensitive() {
			sluiceDefault = cell(v)
		}
		ok, note := config.EnforcedBrokerKey(d.Name)
		fmt.Fprintf(b, "| `%s` | %s | %s | %s | %s | %s |\n", d.Name, d.Type, kafkaDefault, sluiceDefault, updateMode(d), enforcement(ok, note))
		custom = appendCustom(custom, d)
	}

	fmt.Fprintf(b, "\n### Topic keys\n\n")
	fmt.Fprintf(b, "A topic key's default comes from its broker synonyms, first one set wins.\n\n")
	fmt.Fprintf(b, "| Key | Type | Kafka default | Broker synonyms | Enforced by Sluice |\n")
	fmt.Fprintf(b, "|---|---|---|---|---|\n")
	for _, d := range config.TopicKeys() {
		if d.Internal {
			continue
		}
		var syns []string
		for _, s := range d.Synonyms {
			syns = append(syns, "`"+s.Name+"`")
		}
		ok, note := config.EnforcedTopicKey(d)
		fmt.Fprintf(b, "| `%s` | %s | %s | %s | %s |\n", d.Name, d.Type, renderDefault(d), strings.Join(syns, ", "), enforcement(ok, note))
		custom = appendCustom(custom, d)
	}

	fmt.Fprintf(b, "\n### Keys Kafka validates with custom logic\n\n")
	fmt.Fprintf(b, "The rule after each key is Kafka's description of its validator. Sluice reproduces the\n")
	fmt.Fprintf(b, "gzip level range and the throttled-replica list format; the quorum voter and bootstrap lists\n")
	fmt.Fprintf(b, "are parsed by Sluice's KRaft checks (which, like Kafka, accept them empty).\n\n")
	for _, c := range custom {
		fmt.Fprintf(b, "- %s\n", c)
	}
	b.WriteString("\n")
}

func appendCustom(list []string, d config.KeyDef) []string {
	for _, c := range d.Checks {
		if c.Kind == config.CheckKafkaOnly {
			list = append(list, fmt.Sprintf("`%s`: %s", d.Name, cell(c.Text)))
		}
	}
	return list
}

func renderDefault(d config.KeyDef) string {
	switch {
	case d.Required:
		return "(none)"
	case d.DefaultNull:
		return "null"
	case d.Sensitive():
		return "(sensitive)"
	case d.Default == "":
		return `""`
	}
	return cell(d.Default)
}

// updateMode is how a key can change in Sluice: Kafka's mode when a running
// node applies a dynamic change of it (config.LiveBrokerKey), read-only with
// Kafka's mode noted when AlterConfigs refuses it.
func updateMode(d config.KeyDef) string {
	if d.Update != config.UpdatePerBroker && d.Update != config.UpdateClusterWide {
		return d.Update.String()
	}
	live, defaultOnly := config.LiveBrokerKey(d.Name)
	switch {
	case !live:
		return "read-only (Kafka: " + d.Update.String() + ")"
	case defaultOnly:
		return "cluster-wide default only (Kafka: " + d.Update.String() + ")"
	}
	return d.Update.String()
}

func enforcement(ok bool, note string) string {
	if !ok {
		return "accepted, not enforced yet"
	}
	if note == "" {
		return "yes"
	}
	return "yes: " + note
}

// cell escapes a value for a markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "\n", " ")
	return "`" + s + "`"
}
