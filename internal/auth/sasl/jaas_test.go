package sasl

import (
	"maps"
	"strings"
	"testing"
)

func TestParseJAASConfigKafkaExample(t *testing.T) {
	e, err := ParseServerJAASConfig(`org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";`)
	if err != nil {
		t.Fatal(err)
	}
	if e.LoginModule != PlainLoginModule || e.Flag != "required" {
		t.Fatalf("module %q flag %q", e.LoginModule, e.Flag)
	}
	want := map[string]string{"username": "admin", "password": "admin-secret", "user_admin": "admin-secret", "user_alice": "alice-secret"}
	if !maps.Equal(e.Options, want) {
		t.Fatalf("options %v, want %v", e.Options, want)
	}
}

func TestParseJAASConfigSyntax(t *testing.T) {
	cases := []struct {
		name, in string
		want     []JAASEntry
	}{
		{"no options", `a.B REQUIRED;`, []JAASEntry{{"a.B", "required", map[string]string{}}}},
		{"bare word values and flags", `m optional k1=v-1_$ k2=w.2;`,
			[]JAASEntry{{"m", "optional", map[string]string{"k1": "v-1_$", "k2": "w.2"}}}},
		{"single quotes and escapes", `m sufficient k='a b' q="x\"y\\z\t\101\0";`,
			[]JAASEntry{{"m", "sufficient", map[string]string{"k": "a b", "q": "x\"y\\z\tA\x00"}}}},
		{"comments and newlines", "// leading\nm /* inline */ requisite\n  k=\"v\" // tail\n;",
			[]JAASEntry{{"m", "requisite", map[string]string{"k": "v"}}}},
		{"two entries", `a required x="1"; b optional y="2";`, []JAASEntry{
			{"a", "required", map[string]string{"x": "1"}},
			{"b", "optional", map[string]string{"y": "2"}}}},
		{"later key wins", `m required k="1" k="2";`, []JAASEntry{{"m", "required", map[string]string{"k": "2"}}}},
		{"unicode in quotes", `m required k="pässwörd";`, []JAASEntry{{"m", "required", map[string]string{"k": "pässwörd"}}}},
		{"quoted string ends at line end", "m required k=\"abc\n;", []JAASEntry{{"m", "required", map[string]string{"k": "abc"}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseJAASConfig(c.in)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(c.want) {
				t.Fatalf("%d entries, want %d: %+v", len(got), len(c.want), got)
			}
			for i := range got {
				if got[i].LoginModule != c.want[i].LoginModule || got[i].Flag != c.want[i].Flag || !maps.Equal(got[i].Options, c.want[i].Options) {
					t.Fatalf("entry %d = %+v, want %+v", i, got[i], c.want[i])
				}
			}
		})
	}
}

func TestParseJAASConfigErrors(t *testing.T) {
	cases := []struct{ in, wantErr string }{
		{``, "login module not specified"},
		{`   // only a comment`, "login module not specified"},
		{`m`, "control flag not specified"},
		{`m = ;`, "control flag is not available"},
		{`m mandatory;`, "invalid login module control flag"},
		{`m required k="v"`, "not terminated by semi-colon"},
		{`m required k;`, "value not specified for key 'k'"},
		{`m required k=;`, "value not specified for key 'k'"},
		{`m required k=123;`, "value not specified for key 'k'"},
		{`m required k=`, "value not specified for key 'k'"},
		{`m required ="v";`, "option name expected"},
		{`"m" required; 5 required;`, "login module name not specified"},
		{`m required /* unterminated`, "not terminated by semi-colon"},
	}
	for _, c := range cases {
		_, err := ParseJAASConfig(c.in)
		if err == nil || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("ParseJAASConfig(%q) = %v, want an error containing %q", c.in, err, c.wantErr)
		}
	}
}

func TestParseJAASConfigErrorsHideValues(t *testing.T) {
	_, err := ParseJAASConfig(`m required user_alice="s3cret" other=`)
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("error %v must exist and not show the password", err)
	}
}

func TestParseServerJAASConfigWantsOneModule(t *testing.T) {
	_, err := ParseServerJAASConfig(`a required; b required;`)
	if err == nil || !strings.Contains(err.Error(), "contains 2 login modules") {
		t.Fatalf("err = %v", err)
	}
}

func TestJAASConfigKey(t *testing.T) {
	if got := JAASConfigKey("SASL_SSL", ScramSHA256); got != "listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config" {
		t.Fatal(got)
	}
}
