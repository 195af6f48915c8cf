package group

// Regular-expression subscriptions: resolved against the topics (RE2,
// whole names, as Kafka's RE2J), refreshed when the topics change.

import (
	"maps"
	"regexp"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// updateRegexes keeps the group's resolved regular expressions in step
// with the member's; it reports whether the member's regex changed.
func (m *Manager) updateRegexes(now time.Time, g *Group, old, updated *consumerMember, topics Topics) (bool, error) {
	cg := g.cg
	if old.regex == updated.regex {
		return false, nil
	}
	if old.regex != "" && cg.regexCount(old.regex) == 1 && cg.members[old.id] != nil {
		m.cgDo(g, opRegexTombstone{old.regex})
	}
	if updated.regex != "" {
		if _, ok := cg.regexes[updated.regex]; !ok {
			re, err := compileTopicRegex(updated.regex)
			if err != nil {
				return false, hbErr(kerr.InvalidRegularExpression.Code, "SubscribedTopicRegex `%s` is not a valid regular expression: %v.", updated.regex, err)
			}
			m.cgDo(g, opRegex{regex: updated.regex, resolved: resolveRegex(re, topics, now, m.canDescribe)})
		}
	}
	return true, nil
}

// compileTopicRegex compiles a subscription regex as Kafka's RE2J matches
// it: against the whole topic name.
func compileTopicRegex(expr string) (*regexp.Regexp, error) {
	if _, err := regexp.Compile(expr); err != nil {
		return nil, err // the error names the member's expression as sent
	}
	return regexp.Compile(`^(?:` + expr + `)$`)
}

func resolveRegex(re *regexp.Regexp, topics Topics, now time.Time, canDescribe func(string) bool) resolvedRegex {
	var out []string
	for _, name := range topics.Names() {
		if re.MatchString(name) && (canDescribe == nil || canDescribe(name)) {
			out = append(out, name)
		}
	}
	return resolvedRegex{topics: out, version: topics.Version(), timestamp: now.UnixMilli()}
}

// refreshRegexes re-resolves the group's regexes against newer topics;
// it reports whether any resolved differently.
func (m *Manager) refreshRegexes(g *Group, topics Topics, now time.Time) bool {
	changed := false
	for _, expr := range slices.Sorted(maps.Keys(g.cg.regexes)) {
		old := g.cg.regexes[expr]
		if old.version == topics.Version() {
			continue
		}
		re, err := compileTopicRegex(expr)
		if err != nil {
			continue
		}
		next := resolveRegex(re, topics, now, m.canDescribe)
		if !slices.Equal(old.topics, next.topics) {
			changed = true
		}
		m.cgDo(g, opRegex{regex: expr, resolved: next})
	}
	return changed
}
