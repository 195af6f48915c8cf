package sasl

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// JAASEntry is one login module of a sasl.jaas.config value:
//
//	org.apache.kafka.common.security.plain.PlainLoginModule required
//	    username="admin" password="admin-secret" user_alice="alice-secret";
type JAASEntry struct {
	// LoginModule is the module's class name.
	LoginModule string
	// Flag is the control flag, lower-cased: required, requisite,
	// sufficient or optional.
	Flag string
	// Options are the key=value pairs. They hold secrets: never log them.
	Options map[string]string
}

// Login modules whose options the mechanisms read.
const (
	PlainLoginModule       = "org.apache.kafka.common.security.plain.PlainLoginModule"
	ScramLoginModule       = "org.apache.kafka.common.security.scram.ScramLoginModule"
	OAuthBearerLoginModule = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
)

// ParseJAASConfig reads a sasl.jaas.config value as Kafka's JaasConfig
// does (a java.io.StreamTokenizer with // and /* */ comments, '-', '_' and
// '$' as word characters): entries of a login module, a control flag and
// key=value options, each ended by ';'. Values are words or single- or
// double-quoted strings with Java's escapes; a bare number is not a value.
// Errors name keys, never values.
func ParseJAASConfig(s string) ([]JAASEntry, error) {
	t := jaasTokenizer{s: s}
	var entries []JAASEntry
	for {
		tok := t.next()
		if tok.kind == tokEOF {
			break
		}
		e, err := parseJAASEntry(&t, tok)
		if err != nil {
			return nil, err
		}
		entries = append(entries, e)
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("login module not specified in JAAS config")
	}
	return entries, nil
}

// ParseServerJAASConfig reads a broker's
// listener.name.<l>.<mechanism>.sasl.jaas.config, which Kafka's
// JaasContext.loadServerContext requires to hold exactly one login module.
func ParseServerJAASConfig(s string) (JAASEntry, error) {
	entries, err := ParseJAASConfig(s)
	if err != nil {
		return JAASEntry{}, err
	}
	if len(entries) != 1 {
		return JAASEntry{}, fmt.Errorf("JAAS config property contains %d login modules, should be 1 module", len(entries))
	}
	return entries[0], nil
}

func parseJAASEntry(t *jaasTokenizer, first jaasToken) (JAASEntry, error) {
	if !first.isString() {
		return JAASEntry{}, fmt.Errorf("login module name not specified in JAAS config")
	}
	e := JAASEntry{LoginModule: first.text, Options: map[string]string{}}
	flag := t.next()
	if flag.kind == tokEOF {
		return JAASEntry{}, fmt.Errorf("login module control flag not specified in JAAS config")
	}
	switch f := strings.ToLower(flag.text); {
	case !flag.isString():
		return JAASEntry{}, fmt.Errorf("login module control flag is not available in the JAAS config")
	case f == "required" || f == "requisite" || f == "sufficient" || f == "optional":
		e.Flag = f
	default:
		return JAASEntry{}, fmt.Errorf("invalid login module control flag in JAAS config")
	}
	for {
		key := t.next()
		if key.kind == tokEOF {
			return JAASEntry{}, fmt.Errorf("JAAS config entry not terminated by semi-colon")
		}
		if key.kind == tokChar && key.ch == ';' {
			return e, nil
		}
		if !key.isString() {
			return JAASEntry{}, fmt.Errorf("option name expected in JAAS config")
		}
		eq, val := t.next(), jaasToken{}
		if eq.kind == tokChar && eq.ch == '=' {
			val = t.next()
		}
		if !val.isString() {
			return JAASEntry{}, fmt.Errorf("value not specified for key '%s' in JAAS config", key.text)
		}
		e.Options[key.text] = val.text
	}
}

// Option returns the option key of the entry.
func (e JAASEntry) Option(key string) (string, bool) {
	v, ok := e.Options[key]
	return v, ok
}

type tokenKind int

const (
	tokEOF tokenKind = iota
	tokWord
	tokQuoted
	tokNumber
	tokChar
)

type jaasToken struct {
	kind tokenKind
	text string // a word's or quoted string's text
	ch   rune   // a tokChar's character
}

// isString is StreamTokenizer's sval != null: a word or a quoted string.
func (t jaasToken) isString() bool { return t.kind == tokWord || t.kind == tokQuoted }

// jaasTokenizer is the subset of java.io.StreamTokenizer Kafka's JaasConfig
// configures.
type jaasTokenizer struct {
	s   string
	pos int
}

func (t *jaasTokenizer) peek() (rune, int) {
	if t.pos >= len(t.s) {
		return -1, 0
	}
	return utf8.DecodeRuneInString(t.s[t.pos:])
}

func isJAASSpace(c rune) bool { return c >= 0 && c <= ' ' }
func isJAASDigit(c rune) bool { return (c >= '0' && c <= '9') || c == '.' }
func isJAASAlpha(c rune) bool {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 160 ||
		c == '-' || c == '_' || c == '$'
}

func (t *jaasTokenizer) next() jaasToken {
	for {
		c, n := t.peek()
		switch {
		case c < 0:
			return jaasToken{kind: tokEOF}
		case isJAASSpace(c):
			t.pos += n
		case c == '/':
			if !t.skipComment() {
				return jaasToken{kind: tokEOF}
			}
		case isJAASDigit(c) || c == '-':
			// '-' is both a digit and a word character in Kafka's
			// tokenizer; the digit rule comes first.
			return t.number()
		case isJAASAlpha(c):
			return t.word()
		case c == '"' || c == '\'':
			t.pos += n
			return t.quoted(c)
		default:
			t.pos += n
			return jaasToken{kind: tokChar, ch: c}
		}
	}
}

// skipComment skips a comment starting at '/': "/*" to "*/", otherwise
// (including "//" and a lone '/', a comment character) to the end of the
// line. It reports false when a block comment runs to the end.
func (t *jaasTokenizer) skipComment() bool {
	t.pos++
	if strings.HasPrefix(t.s[t.pos:], "*") {
		end := strings.Index(t.s[t.pos+1:], "*/")
		if end < 0 {
			t.pos = len(t.s)
			return false
		}
		t.pos += 1 + end + 2
		return true
	}
	if eol := strings.IndexAny(t.s[t.pos:], "\r\n"); eol >= 0 {
		t.pos += eol
	} else {
		t.pos = len(t.s)
	}
	return true
}

func (t *jaasTokenizer) number() jaasToken {
	start := t.pos
	if t.s[t.pos] == '-' {
		t.pos++
		if c, _ := t.peek(); !isJAASDigit(c) {
			return jaasToken{kind: tokChar, ch: '-'}
		}
	}
	for {
		c, n := t.peek()
		if !isJAASDigit(c) {
			break
		}
		t.pos += n
	}
	return jaasToken{kind: tokNumber, text: t.s[start:t.pos]}
}

func (t *jaasTokenizer) word() jaasToken {
	start := t.pos
	for {
		c, n := t.peek()
		if c < 0 || !(isJAASAlpha(c) || isJAASDigit(c)) {
			break
		}
		t.pos += n
	}
	return jaasToken{kind: tokWord, text: t.s[start:t.pos]}
}

// quoted reads a string up to the closing quote, or the end of the line or
// input, with Java's escapes.
func (t *jaasTokenizer) quoted(q rune) jaasToken {
	var b strings.Builder
	for {
		c, n := t.peek()
		switch {
		case c < 0 || c == '\n' || c == '\r':
			return jaasToken{kind: tokQuoted, text: b.String()}
		case c == q:
			t.pos += n
			return jaasToken{kind: tokQuoted, text: b.String()}
		case c == '\\':
			t.pos += n
			b.WriteRune(t.escape())
		default:
			t.pos += n
			b.WriteRune(c)
		}
	}
}

// escape reads what follows a backslash: \a \b \f \n \r \t \v, up to three
// octal digits (three only when the first is 0-3), or the character itself.
func (t *jaasTokenizer) escape() rune {
	c, n := t.peek()
	if c < 0 {
		return utf8.RuneError
	}
	t.pos += n
	if c >= '0' && c <= '7' {
		v, first := c-'0', c
		for i := 0; i < 2; i++ {
			d, _ := t.peek()
			if d < '0' || d > '7' || (i == 1 && first > '3') {
				break
			}
			v = v<<3 + d - '0'
			t.pos++
		}
		return v
	}
	switch c {
	case 'a':
		return 7
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'v':
		return '\v'
	}
	return c
}
