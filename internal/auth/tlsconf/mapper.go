package tlsconf

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dlclark/regexp2"
)

// Kafka's SslPrincipalMapper syntax, ssl.principal.mapping.rules:
// "RULE:pattern/replacement/[LU]" rules and DEFAULT, comma separated, the
// first rule whose pattern matches the whole distinguished name giving
// the name. Patterns are Java regular expressions; regexp2 (a backtracking
// engine with .NET's syntax, which Java's shares for everything but
// possessive quantifiers) runs them with Java's match semantics.
const rulePattern = `(DEFAULT)|RULE:((\\.|[^\\/])*)/((\\.|[^\\/])*)/([LU]?).*?|(.*?)`

// ruleTimeout bounds one rule's match on one name: a pattern that
// backtracks catastrophically fails the connection, not the node.
const ruleTimeout = 100 * time.Millisecond

// ErrNoMatchingRule is returned when no rule applies to a name; Kafka
// fails the connection's authentication then.
var ErrNoMatchingRule = errors.New("no ssl.principal.mapping.rules rule applies")

// PrincipalMapper maps certificate distinguished names to principal names.
type PrincipalMapper struct {
	rules []mappingRule
}

type mappingRule struct {
	isDefault   bool
	pattern     string
	replacement string
	lower       bool
	upper       bool
	whole       *regexp2.Regexp // the pattern anchored at both ends: Java's matches()
	find        *regexp2.Regexp // the pattern as replaceAll searches it
}

// ParseMappingRules parses ssl.principal.mapping.rules as Kafka does
// (SslPrincipalMapper.fromRules); an invalid rule is an error.
func ParseMappingRules(rules string) (*PrincipalMapper, error) {
	splitter := regexp2.MustCompile(`\s*(`+rulePattern+`)\s*(,\s*|$)`, regexp2.None)
	parser := regexp2.MustCompile(`^(?:`+rulePattern+`)`, regexp2.None)
	var texts []string
	for m, _ := splitter.FindStringMatch(strings.TrimSpace(rules)); m != nil; m, _ = splitter.FindNextMatch(m) {
		texts = append(texts, m.GroupByNumber(1).String())
	}
	pm := &PrincipalMapper{}
	for _, text := range texts {
		m, err := parser.FindStringMatch(text)
		if err != nil || m == nil {
			return nil, fmt.Errorf("invalid rule: %s", text)
		}
		if end := m.Index + m.Length; end != len([]rune(text)) {
			return nil, fmt.Errorf("invalid rule: `%s`, unmatched substring: `%s`", text, string([]rune(text)[end:]))
		}
		switch {
		case matched(m, 1):
			pm.rules = append(pm.rules, mappingRule{isDefault: true})
		case matched(m, 2):
			r, err := newRule(m.GroupByNumber(2).String(), m.GroupByNumber(4).String(), m.GroupByNumber(6).String())
			if err != nil {
				return nil, err
			}
			pm.rules = append(pm.rules, r)
		}
		// Anything else is an empty rule, which Kafka ignores.
	}
	return pm, nil
}

func matched(m *regexp2.Match, n int) bool {
	g := m.GroupByNumber(n)
	return g != nil && len(g.Captures) > 0
}

func newRule(pattern, replacement, flag string) (mappingRule, error) {
	r := mappingRule{pattern: pattern, replacement: replacement, lower: flag == "L", upper: flag == "U"}
	var err error
	if r.whole, err = regexp2.Compile(`\A(?:`+pattern+`)\z`, regexp2.None); err != nil {
		return r, fmt.Errorf("invalid rule pattern %q: %w", pattern, err)
	}
	if r.find, err = regexp2.Compile(pattern, regexp2.None); err != nil {
		return r, fmt.Errorf("invalid rule pattern %q: %w", pattern, err)
	}
	r.whole.MatchTimeout, r.find.MatchTimeout = ruleTimeout, ruleTimeout
	return r, nil
}

// Name maps a distinguished name (as DistinguishedName renders it).
func (pm *PrincipalMapper) Name(dn string) (string, error) {
	for _, r := range pm.rules {
		name, ok, err := r.apply(dn)
		if err != nil {
			return "", err
		}
		if ok {
			return name, nil
		}
	}
	return "", fmt.Errorf("%w to %s, rules %s", ErrNoMatchingRule, dn, pm.ruleList())
}

// String is SslPrincipalMapper's toString, which Kafka's tests compare.
func (pm *PrincipalMapper) String() string {
	return "SslPrincipalMapper(rules = " + pm.ruleList() + ")"
}

func (pm *PrincipalMapper) ruleList() string {
	parts := make([]string, len(pm.rules))
	for i, r := range pm.rules {
		parts[i] = r.String()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func (r mappingRule) String() string {
	if r.isDefault {
		return "DEFAULT"
	}
	s := "RULE:" + r.pattern + "/" + r.replacement
	switch {
	case r.lower:
		s += "/L"
	case r.upper:
		s += "/U"
	}
	return s
}

// apply is Rule.apply: when the pattern matches the whole name, the name
// with every match replaced (String.replaceAll), then the case flag.
func (r mappingRule) apply(dn string) (string, bool, error) {
	if r.isDefault {
		return dn, true, nil
	}
	ok, err := r.whole.MatchString(dn)
	if err != nil || !ok {
		return "", false, err
	}
	groups := len(r.find.GetGroupNumbers()) - 1
	repl := escapeLiteralBackReferences(r.replacement, groups)
	runes := []rune(dn)
	var out strings.Builder
	last := 0
	m, err := r.find.FindRunesMatch(runes)
	for ; m != nil && err == nil; m, err = r.find.FindNextMatch(m) {
		out.WriteString(string(runes[last:m.Index]))
		if err := expandReplacement(&out, repl, m, groups); err != nil {
			return "", false, err
		}
		last = m.Index + m.Length
	}
	if err != nil {
		return "", false, err
	}
	out.WriteString(string(runes[last:]))
	name := out.String()
	switch {
	case r.lower:
		name = strings.ToLower(name)
	case r.upper:
		name = strings.ToUpper(name)
	}
	return name, true, nil
}
