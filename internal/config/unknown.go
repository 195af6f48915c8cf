package config

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
)

// pluginKeys are keys outside KafkaConfig's ConfigDef that Sluice reads: Kafka's
// StandardAuthorizer takes them from the broker's configuration.
func pluginKeys() []string {
	return []string{"super.users", "allow.everyone.if.no.acl.found"}
}

// UnknownKey is a key set at start-up (file, environment or --override) that neither Kafka's
// broker nor Sluice defines.
type UnknownKey struct {
	Key string
	// Var is the environment variable that set it, "" when the file or --override did.
	Var string
	// Suggestion is the nearest real key, "" when none is near.
	Suggestion string
	// TopicKey marks a topic key set for the broker (retention.ms); Suggestion is then its
	// broker synonym (log.retention.ms), if it has one.
	TopicKey bool
}

// String is the key as the start-up log and --strict-config name it.
func (u UnknownKey) String() string {
	var notes []string
	if u.Var != "" {
		notes = append(notes, "set by "+u.Var)
	}
	if u.TopicKey {
		notes = append(notes, "a topic key")
	}
	if u.Suggestion != "" {
		notes = append(notes, "did you mean "+u.Suggestion+"?")
	}
	if len(notes) == 0 {
		return u.Key
	}
	return u.Key + " (" + strings.Join(notes, "; ") + ")"
}

// KeyReport sorts the keys set at start-up into the two kinds an operator should hear about.
// One rule, the one docs/configuration.md's tables follow: a key of Kafka's broker (or a
// dynamic-named key built on one: listener.name.<listener>.[<mechanism>.]<key>, plugin
// prefixes) is accepted; when Sluice does not act on it (enforced.go), it is listed in
// NotEnforced. Every other key, Sluice's own sluice.* keys aside, is Unknown.
type KeyReport struct {
	Unknown     []UnknownKey
	NotEnforced []string
}

// CheckKeys classifies the keys of the file, the environment (env, from FromEnv) and the
// overrides, sorted by key.
func (c *Config) CheckKeys(env []EnvSetting) KeyReport {
	fromEnv := map[string]string{}
	for _, s := range env {
		fromEnv[s.Key] = s.Var
	}
	var r KeyReport
	for _, k := range sortedKeys(c.static) {
		known, enforced, u := c.classify(k)
		switch {
		case !known:
			u.Var = fromEnv[k]
			r.Unknown = append(r.Unknown, u)
		case !enforced:
			r.NotEnforced = append(r.NotEnforced, k)
		}
	}
	return r
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// classify says whether a static key is known and enforced; for an unknown key it returns
// the report with its suggestion.
func (c *Config) classify(k string) (known, enforced bool, u UnknownKey) {
	if _, ok := c.brokerDefs[k]; ok {
		return true, c.brokerKeyEnforced(k), u
	}
	if slices.Contains(sluiceKeyNames(), k) || slices.Contains(pluginKeys(), k) {
		return true, true, u
	}
	if rest, ok := strings.CutPrefix(k, "listener.name."); ok {
		return c.classifyListenerKey(k, rest)
	}
	for _, p := range c.pluginPrefixes() {
		if strings.HasPrefix(k, p) && len(k) > len(p) {
			return true, false, u
		}
	}
	u = UnknownKey{Key: k}
	if d, ok := c.topicDefs[k]; ok {
		u.TopicKey = true
		if len(d.Synonyms) > 0 {
			u.Suggestion = d.Synonyms[0].Name
		}
		return false, false, u
	}
	u.Suggestion = nearest(k, c.knownKeyNames())
	return false, false, u
}

// classifyListenerKey handles listener.name.<listener>.<key> and its per-mechanism form
// listener.name.<listener>.<mechanism>.<key> (SASL), where key is a broker key.
func (c *Config) classifyListenerKey(k, rest string) (known, enforced bool, u UnknownKey) {
	listener, key, ok := strings.Cut(rest, ".")
	if !ok || listener == "" {
		return false, false, UnknownKey{Key: k}
	}
	if _, ok := c.brokerDefs[key]; ok {
		return true, c.brokerKeyEnforced(key), u
	}
	if mech, base, ok := strings.Cut(key, "."); ok && mech != "" {
		if _, ok := c.brokerDefs[base]; ok {
			return true, c.brokerKeyEnforced(base), u
		}
	}
	u = UnknownKey{Key: k}
	prefix := "listener.name." + listener + "."
	if s := nearest(key, c.knownKeyNames()); s != "" {
		u.Suggestion = prefix + s
	} else if mech, base, ok := strings.Cut(key, "."); ok && mech != "" {
		if s := nearest(base, c.knownKeyNames()); s != "" {
			u.Suggestion = prefix + mech + "." + s // a misspelt per-mechanism key
		}
	}
	return false, false, u
}

// brokerKeyEnforced is EnforcedBrokerKey extended to a key's synonyms: broker.id is node.id's,
// log.roll.jitter.hours goes with log.roll.jitter.ms.
func (c *Config) brokerKeyEnforced(k string) bool {
	if ok, _ := EnforcedBrokerKey(k); ok {
		return true
	}
	if k == "broker.id" {
		ok, _ := EnforcedBrokerKey("node.id")
		return ok
	}
	for _, s := range c.groups[k] {
		if ok, _ := EnforcedBrokerKey(s.Name); ok {
			return true
		}
	}
	return false
}

// pluginPrefixes are the key families Kafka hands to plugins whole: the config providers'
// settings, the metrics reporters' context and the remote storage plugins' prefixes (as
// configured). Sluice loads no plugin, so their keys are accepted and not enforced.
func (c *Config) pluginPrefixes() []string {
	out := []string{"config.providers.", "metrics.context."}
	for _, k := range []string{"remote.log.storage.manager.impl.prefix", "remote.log.metadata.manager.impl.prefix"} {
		if p := strings.TrimSpace(c.str(k)); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// knownKeyNames are the keys a suggestion may name.
func (c *Config) knownKeyNames() []string {
	names := make([]string, 0, len(c.brokerDefs)+16)
	for k := range c.brokerDefs {
		names = append(names, k)
	}
	names = append(names, sluiceKeyNames()...)
	return append(names, pluginKeys()...)
}

// Err is the --strict-config refusal: every unknown key with its suggestion, or nil.
func (r KeyReport) Err() error {
	if len(r.Unknown) == 0 {
		return nil
	}
	lines := make([]string, 0, len(r.Unknown))
	for _, u := range r.Unknown {
		lines = append(lines, "  "+u.String())
	}
	return fmt.Errorf("refusing to start (--strict-config): %d unknown configuration key(s):\n%s", len(r.Unknown), strings.Join(lines, "\n"))
}

// Log writes the report once at start-up: a warning per unknown key (Kafka logs them as
// "supplied but are not used yet") and one line listing the keys Sluice does not act on.
func (r KeyReport) Log(logger *slog.Logger) {
	for _, u := range r.Unknown {
		logger.Warn("unknown configuration key "+u.String(), "key", u.Key)
	}
	if len(r.NotEnforced) > 0 {
		logger.Info("configuration keys accepted but not enforced by Sluice yet (docs/configuration.md)",
			"keys", strings.Join(r.NotEnforced, ","))
	}
}
