package tlsconf

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// The cases of Kafka's SslPrincipalMapperTest, with its Java string
// literals unescaped.

func TestMappingRulesValid(t *testing.T) {
	for _, rules := range []string{
		"DEFAULT",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, DEFAULT",
		"RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/",
		"RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L",
		"RULE:^cn=(.?),ou=(.?),dc=(.?),dc=(.?)$/$1@$2/U",
		"RULE:^CN=([^,ADEFLTU,]+)(,.*|$)/$1/",
		"RULE:^CN=([^,DEFAULT,]+)(,.*|$)/$1/",
	} {
		if _, err := ParseMappingRules(rules); err != nil {
			t.Errorf("%q refused: %v", rules, err)
		}
	}
}

func TestMappingRulesInvalid(t *testing.T) {
	for _, rules := range []string{
		"default",
		"DEFAUL",
		"DEFAULT/L",
		"DEFAULT/U",
		"RULE:CN=(.*?),OU=ServiceUsers.*/$1",
		"rule:^CN=(.*?),OU=ServiceUsers.*$/$1/",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L/U",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/L",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/U",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/LU",
	} {
		if _, err := ParseMappingRules(rules); err == nil {
			t.Errorf("%q accepted", rules)
		}
	}
}

func TestPrincipalMapper(t *testing.T) {
	rules := strings.Join([]string{
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L",
		"RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L",
		"RULE:^cn=(.*?),ou=(.*?),dc=(.*?),dc=(.*?)$/$1@$2/U",
		"RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U",
		"DEFAULT",
	}, ", ")
	m, err := ParseMappingRules(rules)
	if err != nil {
		t.Fatal(err)
	}
	for dn, want := range map[string]string{
		"CN=Duke,OU=ServiceUsers,O=Org,C=US":        "duke",
		"CN=Duke,OU=SME,O=mycp,L=Fulton,ST=MD,C=US": "duke@sme",
		"cn=duke,ou=sme,dc=mycp,dc=com":             "DUKE@SME",
		"cN=duke,OU=JavaSoft,O=Sun Microsystems":    "DUKE",
		"OU=JavaSoft,O=Sun Microsystems,C=US":       "OU=JavaSoft,O=Sun Microsystems,C=US",
	} {
		if got, err := m.Name(dn); err != nil || got != want {
			t.Errorf("Name(%q) = %q, %v; want %q", dn, got, err, want)
		}
	}
}

func TestMappingRulesSplitting(t *testing.T) {
	for _, c := range []struct{ want, rules string }{
		// seeing is believing
		{"[]", ""},
		{"[DEFAULT]", "DEFAULT"},
		{"[RULE:/]", "RULE://"},
		{"[RULE:/.*]", "RULE:/.*/"},
		{"[RULE:/.*/L]", "RULE:/.*/L"},
		{"[RULE:/, DEFAULT]", "RULE://,DEFAULT"},
		{"[RULE:/, DEFAULT]", "  RULE:// ,  DEFAULT  "},
		{"[RULE:   /     , DEFAULT]", "  RULE:   /     / ,  DEFAULT  "},
		{"[RULE:  /     /U, DEFAULT]", "  RULE:  /     /U   ,DEFAULT  "},
		{"[RULE:([A-Z]*)/$1/U, RULE:([a-z]+)/$1, DEFAULT]", "  RULE:([A-Z]*)/$1/U   ,RULE:([a-z]+)/$1/,   DEFAULT  "},
		// empty rules are ignored
		{"[]", ",   , , ,      , , ,   "},
		{"[RULE:/, DEFAULT]", ",,RULE://,,,DEFAULT,,"},
		{"[RULE: /   , DEFAULT]", ",  , RULE: /   /    ,,,   DEFAULT, ,   "},
		{"[RULE:   /  /U, DEFAULT]", "     ,  , RULE:   /  /U    ,,  ,DEFAULT, ,"},
		// escape sequences
		{`[RULE:\/\\\(\)\n\t/\/\/]`, `RULE:\/\\\(\)\n\t/\/\//`},
		{`[RULE:\**\/+/*/L, RULE:\/*\**/**]`, `RULE:\**\/+/*/L,RULE:\/*\**/**/`},
		// rules rule
		{
			`[RULE:,RULE:,/,RULE:,\//U, RULE:,/RULE:,, RULE:,RULE:,/L,RULE:,/L, RULE:, DEFAULT, /DEFAULT, DEFAULT]`,
			`RULE:,RULE:,/,RULE:,\//U,RULE:,/RULE:,/,RULE:,RULE:,/L,RULE:,/L,RULE:, DEFAULT, /DEFAULT/,DEFAULT`,
		},
	} {
		m, err := ParseMappingRules(c.rules)
		if err != nil {
			t.Errorf("%q: %v", c.rules, err)
			continue
		}
		if got, want := m.String(), fmt.Sprintf("SslPrincipalMapper(rules = %s)", c.want); got != want {
			t.Errorf("%q: %s, want %s", c.rules, got, want)
		}
	}
}

func TestMappingRulesCommaWithWhitespace(t *testing.T) {
	m, err := ParseMappingRules(`RULE:^CN=((\\, *|\w)+)(,.*|$)/$1/,DEFAULT`)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := m.Name(`CN=Tkac\, Adam,OU=ITZ,DC=geodis,DC=cz`); err != nil || got != `Tkac\, Adam` {
		t.Errorf("Name = %q, %v", got, err)
	}
}

// Sluice's own: no rule matching fails, as Kafka's NoMatchingRule; a
// replacement naming a group the pattern lacks keeps it literally
// (Kafka's escapeLiteralBackReferences); Java's replaceAll also replaces
// the empty match at the end of a pattern that can match nothing.
func TestMappingRulesEdges(t *testing.T) {
	m, err := ParseMappingRules("RULE:^CN=(.*)$/$1/")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Name("O=Org"); !errors.Is(err, ErrNoMatchingRule) {
		t.Errorf("no rule: %v", err)
	}
	for _, c := range []struct{ rules, dn, want string }{
		{"RULE:^CN=(.*?),O=(.*)$/$1@$3/", "CN=a,O=b", "a@$3"},
		{"RULE:^CN=(.*?),O=(.*)$/$12/", "CN=a,O=b", "a2"},
		{`RULE:^CN=(.*?),O=(.*)$/\$1-$2/`, "CN=a,O=b", "$1-b"},
		{"RULE:.*/x/", "CN=a", "xx"},
		{"RULE:CN=(?<user>[a-z]+)/${user}/", "CN=alice", "alice"},
	} {
		m, err := ParseMappingRules(c.rules)
		if err != nil {
			t.Errorf("%s: %v", c.rules, err)
			continue
		}
		if got, err := m.Name(c.dn); err != nil || got != c.want {
			t.Errorf("%s on %s = %q, %v; want %q", c.rules, c.dn, got, err, c.want)
		}
	}
}
