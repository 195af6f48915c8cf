package config

import (
	"bytes"
	"log/slog"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// checkOne classifies a single key set in the file (with node.id, which every config has).
func checkOne(t *testing.T, key string) KeyReport {
	t.Helper()
	c, err := Parse("", map[string]string{key: "x"})
	if err != nil {
		// values are not the point here; a key whose validator refuses "x" gets a valid value
		c, err = Parse("", map[string]string{key: "1"})
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
	}
	return c.CheckKeys(nil)
}

func TestUnknownKeysSuggestNearMisses(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want string // UnknownKey.String(), "" when the key is known
	}{
		{"log.retention.hourz", "log.retention.hourz (did you mean log.retention.hours?)"},
		{"num.partitons", "num.partitons (did you mean num.partitions?)"},
		{"Log.Retention.Hours", "Log.Retention.Hours (did you mean log.retention.hours?)"},
		{"log_retention_hours", "log_retention_hours (did you mean log.retention.hours?)"},
		{"auto.create.topcis.enable", "auto.create.topcis.enable (did you mean auto.create.topics.enable?)"},
		{"sluice.metrics.listner", "sluice.metrics.listner (did you mean sluice.metrics.listener?)"},
		{"super.user", "super.user (did you mean super.users?)"},
		{"listener.name.internal.ssl.keystore.locaton", "listener.name.internal.ssl.keystore.locaton (did you mean listener.name.internal.ssl.keystore.location?)"},
		{"listener.name.sasl_ssl.plain.sasl.jaas.confg", "listener.name.sasl_ssl.plain.sasl.jaas.confg (did you mean listener.name.sasl_ssl.plain.sasl.jaas.config?)"},
		// topic keys belong to topics; the broker's default is the synonym
		{"retention.ms", "retention.ms (a topic key; did you mean log.retention.ms?)"},
		{"cleanup.policy", "cleanup.policy (a topic key; did you mean log.cleanup.policy?)"},
		// nothing near: no guess
		{"log.retention.days", "log.retention.days"},
		{"my.plugin.setting", "my.plugin.setting"},
		{"zookeeper.connect", "zookeeper.connect"},
		{"listener.name.internal", "listener.name.internal"},
		{"listener.name.internal.no.such.key", "listener.name.internal.no.such.key"},
		// known: Kafka's keys, Sluice's own, the authorizer's, dynamic-named families
		{"log.retention.hours", ""},
		{"num.io.threads", ""},
		{"sluice.metrics.listener", ""},
		{"super.users", ""},
		{"listener.name.internal.ssl.keystore.location", ""},
		{"listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config", ""},
		{"listener.name.sasl_ssl.oauthbearer.connections.max.reauth.ms", ""},
		{"config.providers.file.class", ""},
		{"metrics.context.env", ""},
		{"rsm.config.bucket", ""},
		{"rlmm.config.x", ""},
	} {
		r := checkOne(t, tc.key)
		var got string
		if len(r.Unknown) > 0 {
			got = r.Unknown[0].String()
		}
		if len(r.Unknown) > 1 || got != tc.want {
			t.Errorf("%s: got %v, want %q", tc.key, r.Unknown, tc.want)
		}
	}
}

func TestNotEnforcedKeysListed(t *testing.T) {
	for _, tc := range []struct {
		key         string
		notEnforced bool
	}{
		{"num.io.threads", true},
		{"config.providers.file.class", true},
		{"rsm.config.bucket", true},
		{"listener.name.internal.max.connection.creation.rate", true},
		{"log.retention.hours", false},
		{"log.roll.jitter.hours", false}, // goes with log.roll.jitter.ms
		{"listener.name.internal.ssl.keystore.location", false},
		{"sluice.log.level", false},
		{"super.users", false},
		{"log.retention.hourz", false}, // unknown, not in this list
	} {
		r := checkOne(t, tc.key)
		if got := slices.Contains(r.NotEnforced, tc.key); got != tc.notEnforced {
			t.Errorf("%s: in NotEnforced = %v, want %v (%v)", tc.key, got, tc.notEnforced, r.NotEnforced)
		}
	}
}

// node.id copies itself to broker.id (its synonym); neither is an unknown or unenforced key.
func TestNodeIDSynonymNotReported(t *testing.T) {
	c, err := Parse("node.id=1\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := c.CheckKeys(nil); len(r.Unknown)+len(r.NotEnforced) != 0 {
		t.Fatalf("got %+v", r)
	}
}

func TestUnknownKeyNamesItsVariable(t *testing.T) {
	env := FromEnv([]string{"KAFKA_LOG_RETENTION_HOURZ=5", "KAFKA_NUM_PARTITIONS=3"})
	c, err := Parse("", EnvOverrides(env))
	if err != nil {
		t.Fatal(err)
	}
	r := c.CheckKeys(env)
	want := "log.retention.hourz (set by KAFKA_LOG_RETENTION_HOURZ; did you mean log.retention.hours?)"
	if len(r.Unknown) != 1 || r.Unknown[0].String() != want {
		t.Fatalf("got %v, want %q", r.Unknown, want)
	}
}

func TestStrictRefusalListsEveryUnknownKey(t *testing.T) {
	c, err := Parse("log.retention.hourz=5\nmy.plugin=1\nnum.partitions=3\nnum.io.threads=4\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	err = c.CheckKeys(nil).Err()
	want := "refusing to start (--strict-config): 2 unknown configuration key(s):\n" +
		"  log.retention.hourz (did you mean log.retention.hours?)\n" +
		"  my.plugin"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
	clean, err := Parse("num.partitions=3\nnum.io.threads=4\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := clean.CheckKeys(nil).Err(); err != nil {
		t.Fatalf("known keys refused: %v", err)
	}
}

func TestReportLogsOnce(t *testing.T) {
	c, err := Parse("log.retention.hourz=5\nnum.io.threads=4\nnum.network.threads=2\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	c.CheckKeys(nil).Log(slog.New(slog.NewTextHandler(&buf, nil)))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 lines, got %q", buf.String())
	}
	if !strings.Contains(lines[0], `level=WARN msg="unknown configuration key log.retention.hourz (did you mean log.retention.hours?)" key=log.retention.hourz`) {
		t.Errorf("warning: %s", lines[0])
	}
	if !strings.Contains(lines[1], "level=INFO") || !strings.Contains(lines[1], "keys=num.io.threads,num.network.threads") {
		t.Errorf("not-enforced line: %s", lines[1])
	}
}

func TestOSADistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"abc", "", 3},
		{"", "abc", 3},
		{"hours", "hourz", 1},
		{"hours", "huors", 1}, // a transposition is one edit
		{"ca", "abc", 3},      // optimal string alignment, not unrestricted Damerau (2)
		{"kitten", "sitting", 3},
		{"log.retention.hours", "log_retention_hours", 2},
	} {
		if got := osaDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("osaDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := osaDistance(tc.b, tc.a); got != tc.want {
			t.Errorf("osaDistance(%q, %q) = %d, want %d (symmetric)", tc.b, tc.a, got, tc.want)
		}
	}
}

// A known key is its own nearest key: nothing else is at distance 0.
func TestNearestFindsKnownKeysThemselves(t *testing.T) {
	known := Defaults().knownKeyNames()
	slices.Sort(known)
	for i := 0; i < len(known); i += 5 {
		if got := nearest(known[i], known); got != known[i] {
			t.Errorf("nearest(%s) = %s", known[i], got)
		}
	}
}

// sluiceKeyNames must list every SluiceKey declared in keytypes.go, or CheckKeys would call
// a new key unknown.
func TestSluiceKeyNamesListsEveryKey(t *testing.T) {
	src, err := os.ReadFile("keytypes.go")
	if err != nil {
		t.Fatal(err)
	}
	var declared []string
	for _, m := range regexp.MustCompile(`= SluiceKey\{"([^"]+)"\}`).FindAllStringSubmatch(string(src), -1) {
		declared = append(declared, m[1])
	}
	listed := sluiceKeyNames()
	slices.Sort(declared)
	slices.Sort(listed)
	if len(declared) == 0 || !reflect.DeepEqual(declared, listed) {
		t.Fatalf("declared %v, listed %v", declared, listed)
	}
}

// docs/configuration.md's hand-written table of Sluice-only keys lists exactly the keys
// sluiceKeyNames knows.
func TestSluiceKeysDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for _, m := range regexp.MustCompile("(?m)^\\| `(sluice\\.[a-z.]+)` \\|").FindAllStringSubmatch(string(doc), -1) {
		documented = append(documented, m[1])
	}
	listed := sluiceKeyNames()
	slices.Sort(documented)
	slices.Sort(listed)
	if !reflect.DeepEqual(documented, listed) {
		t.Fatalf("docs/configuration.md documents %v, sluiceKeyNames lists %v", documented, listed)
	}
}
