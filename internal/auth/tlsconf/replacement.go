package tlsconf

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/dlclark/regexp2"
)

// backReference finds $N in a replacement.
var backReference = regexp.MustCompile(`\$(\d+)`)

// escapeLiteralBackReferences is Kafka's (taken from NiFi): a $N naming a
// group the pattern does not have is a literal "$N", after trimming
// trailing digits as long as the number is too large and has two digits
// or more ($123 with 12 groups is group 12 then "3").
func escapeLiteralBackReferences(unescaped string, groups int) string {
	if groups == 0 {
		return unescaped
	}
	value := unescaped
	for _, loc := range backReference.FindAllStringSubmatchIndex(unescaped, -1) {
		num := unescaped[loc[2]:loc[3]]
		if strings.HasPrefix(num, "0") {
			continue
		}
		idx, err := strconv.Atoi(num)
		if err != nil {
			idx = groups + 1
		}
		for idx > groups && idx >= 10 {
			idx /= 10
		}
		if idx > groups {
			// Kafka inserts the escape at the reference's offset in the
			// original string into the string as escaped so far, so a
			// second escape lands one place early, as it does there.
			at := loc[2] - 1
			value = value[:at] + "\\" + value[at:]
		}
	}
	return value
}

// expandReplacement appends a Java replacement string (Matcher's
// appendReplacement syntax: \x is a literal x, $N the group N taking as
// many digits as name a group, ${name} a named group) for one match.
func expandReplacement(out *strings.Builder, repl string, m *regexp2.Match, groups int) error {
	r := []rune(repl)
	for i := 0; i < len(r); {
		switch c := r[i]; c {
		case '\\':
			i++
			if i == len(r) {
				return errors.New("character to be escaped is missing")
			}
			out.WriteRune(r[i])
			i++
		case '$':
			i++
			if i == len(r) {
				return errors.New("illegal group reference: group index is missing")
			}
			var g *regexp2.Group
			if r[i] == '{' {
				end := i + 1
				for end < len(r) && r[end] != '}' {
					end++
				}
				if end == len(r) {
					return errors.New("named capturing group is missing trailing '}'")
				}
				g = m.GroupByName(string(r[i+1 : end]))
				if g == nil {
					return fmt.Errorf("no group with name {%s}", string(r[i+1:end]))
				}
				i = end + 1
			} else {
				if r[i] < '0' || r[i] > '9' {
					return errors.New("illegal group reference")
				}
				ref := int(r[i] - '0')
				i++
				for i < len(r) && r[i] >= '0' && r[i] <= '9' {
					next := ref*10 + int(r[i]-'0')
					if next > groups {
						break
					}
					ref = next
					i++
				}
				if ref > groups {
					return fmt.Errorf("no group %d", ref)
				}
				g = m.GroupByNumber(ref)
			}
			if g != nil && len(g.Captures) > 0 {
				out.WriteString(g.String())
			}
		default:
			out.WriteRune(c)
			i++
		}
	}
	return nil
}
