package metrics

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// promqlKeywords are the PromQL words that are neither metric names nor
// functions: binary set operators, modifiers and the grouping clauses
// (whose label lists metricNames skips).
var promqlKeywords = map[string]bool{
	"and": true, "or": true, "unless": true, "bool": true, "offset": true,
	"by": true, "without": true, "on": true, "ignoring": true,
	"group_left": true, "group_right": true, "inf": true, "nan": true,
	"start": true, "end": true,
}

// labelListKeywords are followed by a parenthesised list of label names.
var labelListKeywords = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true,
	"group_left": true, "group_right": true,
}

// aggregations are PromQL's aggregation operators, which may put their
// grouping clause before their parentheses: sum by (x) (...).
var aggregations = map[string]bool{
	"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true,
	"stdvar": true, "count": true, "count_values": true, "bottomk": true, "topk": true,
	"quantile": true, "limitk": true, "limit_ratio": true,
}

// metricNames returns the metric names a PromQL expression selects, sorted
// and without duplicates. It is a lexer, not a parser: strings, label
// matchers ({...}), ranges ([...]), numbers and durations, Grafana
// variables ($x, ${x}) and comments are skipped; an identifier followed by
// "(" is a function or an aggregation; the label lists of by, without, on,
// ignoring, group_left and group_right are skipped. Every other identifier
// is a metric name. A selector written as {__name__="x"} is refused, since
// the name would hide in a matcher.
func metricNames(expr string) ([]string, error) {
	if strings.Contains(expr, "__name__") {
		return nil, fmt.Errorf("expression %q selects by __name__: name the metric instead", expr)
	}
	lx := lexer{src: expr}
	var names []string
	for {
		word, err := lx.nextIdent()
		if err != nil {
			return nil, fmt.Errorf("expression %q: %w", expr, err)
		}
		if word == "" {
			break
		}
		next := lx.peekNonSpace()
		switch {
		case labelListKeywords[word]:
			if next == '(' {
				if err := lx.skipGroup('(', ')'); err != nil {
					return nil, fmt.Errorf("expression %q: %w", expr, err)
				}
			}
		case promqlKeywords[word], next == '(':
		case aggregations[word] && lx.followedByGrouping():
		default:
			names = append(names, word)
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// lexer walks a PromQL expression and hands out identifiers only.
type lexer struct {
	src string
	pos int
}

// nextIdent skips to the next identifier and returns it; "" at the end.
func (l *lexer) nextIdent() (string, error) {
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		switch {
		case c == '"' || c == '\'' || c == '`':
			if err := l.skipString(c); err != nil {
				return "", err
			}
		case c == '{':
			if err := l.skipGroup('{', '}'); err != nil {
				return "", err
			}
		case c == '[':
			if err := l.skipGroup('[', ']'); err != nil {
				return "", err
			}
		case c == '#':
			l.skipLine()
		case c == '$':
			l.skipVariable()
		case isDigit(c) || (c == '.' && l.pos+1 < len(l.src) && isDigit(l.src[l.pos+1])):
			// A number, a hex number or a duration: 0.99, 1e3, 0x1f, 5m, 1h30m.
			l.pos++
			for l.pos < len(l.src) && (isIdentChar(l.src[l.pos]) || l.src[l.pos] == '.') {
				l.pos++
			}
		case isIdentStart(c):
			start := l.pos
			for l.pos < len(l.src) && isIdentChar(l.src[l.pos]) {
				l.pos++
			}
			return l.src[start:l.pos], nil
		default:
			l.pos++
		}
	}
	return "", nil
}

// skipString moves past a quoted string opened by quote at pos.
func (l *lexer) skipString(quote byte) error {
	start := l.pos
	for l.pos++; l.pos < len(l.src); l.pos++ {
		switch l.src[l.pos] {
		case '\\':
			if quote != '`' {
				l.pos++
			}
		case quote:
			l.pos++
			return nil
		}
	}
	return fmt.Errorf("unterminated string at %d", start)
}

// skipGroup moves past the bracketed group opened at the next open,
// strings inside included.
func (l *lexer) skipGroup(open, closing byte) error {
	for l.pos < len(l.src) && l.src[l.pos] != open {
		l.pos++
	}
	start := l.pos
	depth := 0
	for l.pos < len(l.src) {
		switch c := l.src[l.pos]; c {
		case '"', '\'', '`':
			if err := l.skipString(c); err != nil {
				return err
			}
			continue
		case open:
			depth++
		case closing:
			depth--
			if depth == 0 {
				l.pos++
				return nil
			}
		}
		l.pos++
	}
	return fmt.Errorf("unclosed %q at %d", open, start)
}

// skipVariable moves past a Grafana variable: $name, ${name} or
// ${name:format}.
func (l *lexer) skipVariable() {
	l.pos++
	if l.pos < len(l.src) && l.src[l.pos] == '{' {
		for l.pos < len(l.src) && l.src[l.pos] != '}' {
			l.pos++
		}
		l.pos++
		return
	}
	for l.pos < len(l.src) && isIdentChar(l.src[l.pos]) {
		l.pos++
	}
}

func (l *lexer) skipLine() {
	for l.pos < len(l.src) && l.src[l.pos] != '\n' {
		l.pos++
	}
}

// followedByGrouping reports whether the next word is by or without.
func (l *lexer) followedByGrouping() bool {
	rest := strings.TrimLeft(l.src[l.pos:], " \t\r\n")
	for _, kw := range []string{"by", "without"} {
		if strings.HasPrefix(rest, kw) && (len(rest) == len(kw) || !isIdentChar(rest[len(kw)])) {
			return true
		}
	}
	return false
}

// peekNonSpace is the next byte that is not white space, 0 at the end.
func (l *lexer) peekNonSpace() byte {
	for i := l.pos; i < len(l.src); i++ {
		if c := l.src[i]; c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return c
		}
	}
	return 0
}

func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isIdentStart(c byte) bool { return c == '_' || c == ':' || (c|0x20 >= 'a' && c|0x20 <= 'z') }
func isIdentChar(c byte) bool  { return isIdentStart(c) || isDigit(c) }

// labelValuesQuery matches Grafana's label_values(selector, label) and
// label_values(label) variable queries.
var labelValuesQuery = regexp.MustCompile(`^\s*label_values\(\s*(?:(.*?)\s*,\s*)?([A-Za-z_][A-Za-z0-9_]*)\s*\)\s*$`)

// variableSelector splits a Grafana Prometheus variable query into the
// expression it evaluates and the label whose values it lists:
// label_values names a label as its last argument, which is no metric;
// label_names lists no metric; query_result and the rest wrap an
// expression.
func variableSelector(query string) (expr, label string) {
	if m := labelValuesQuery.FindStringSubmatch(query); m != nil {
		return m[1], m[2]
	}
	if strings.HasPrefix(strings.TrimSpace(query), "label_names(") {
		return "", ""
	}
	return query, ""
}

// variableQueryNames returns the metric names a variable query uses.
func variableQueryNames(query string) ([]string, error) {
	expr, _ := variableSelector(query)
	return metricNames(expr)
}

var (
	// quotedString is a PromQL string literal.
	quotedString = regexp.MustCompile("\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'|`[^`]*`")
	// matcherSet is a selector's label matchers, strings already emptied.
	matcherSet = regexp.MustCompile(`\{([^{}]*)\}`)
	// matcherLabel is the label of one matcher.
	matcherLabel = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*)\s*(?:=~|!~|!=|=)`)
	// groupingList is a by, without, on, ignoring, group_left or
	// group_right clause's label list.
	groupingList = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^()]*)\)`)
	// grafanaVariable is $name or ${name...}.
	grafanaVariable = regexp.MustCompile(`\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*`)
)

// exprLabels returns the label names an expression matches on ({l="v"})
// or groups by (by, without, on, ignoring, group_left, group_right),
// sorted and without duplicates. Strings and Grafana variables are removed
// first, so neither a quoted brace nor ${x} reads as a selector; a range
// such as [$__rate_interval] holds no labels.
func exprLabels(expr string) []string {
	clean := grafanaVariable.ReplaceAllString(quotedString.ReplaceAllString(expr, `""`), "")
	var out []string
	for _, m := range matcherSet.FindAllStringSubmatch(clean, -1) {
		for _, l := range matcherLabel.FindAllStringSubmatch(m[1], -1) {
			out = append(out, l[1])
		}
	}
	for _, m := range groupingList.FindAllStringSubmatch(clean, -1) {
		for _, l := range strings.Split(m[1], ",") {
			if l = strings.TrimSpace(l); l != "" {
				out = append(out, l)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
