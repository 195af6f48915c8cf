package sasl

import (
	"encoding/base64"
	"errors"
	"strings"
)

// The SCRAM messages Kafka's ScramMessages parses, checked byte by byte
// against its patterns (RFC 5802 section 7 restricted to ASCII and to the
// gs2 header "n", no channel binding).

// clientFirst is gs2-header [reserved-mext ","] username "," nonce
// ["," extensions].
type clientFirst struct {
	gs2Header  string // "n,," or "n,a=<authzid>,"
	authzid    string // as sent (saslname-encoded), "" when absent
	saslName   string // as sent
	nonce      string
	bare       string // client-first-message-bare, for AuthMessage
	extensions map[string]string
}

var errFormat = errors.New("malformed message")

func parseClientFirst(msg string) (clientFirst, error) {
	var m clientFirst
	rest, ok := strings.CutPrefix(msg, "n,")
	if !ok {
		return m, errFormat
	}
	authzField, bare, ok := strings.Cut(rest, ",")
	if !ok {
		return m, errFormat
	}
	if authzField != "" {
		if m.authzid, ok = strings.CutPrefix(authzField, "a="); !ok || !isSaslName(m.authzid) {
			return m, errFormat
		}
	}
	m.gs2Header, m.bare = msg[:len(msg)-len(bare)], bare
	fields := strings.Split(bare, ",")
	if v, ok := strings.CutPrefix(fields[0], "m="); ok {
		if !isValue(v) {
			return m, errFormat
		}
		fields = fields[1:]
	}
	if len(fields) < 2 {
		return m, errFormat
	}
	var okName, okNonce bool
	m.saslName, okName = strings.CutPrefix(fields[0], "n=")
	m.nonce, okNonce = strings.CutPrefix(fields[1], "r=")
	if !okName || !okNonce || !isSaslName(m.saslName) || !isPrintable(m.nonce) {
		return m, errFormat
	}
	exts, err := parseExtensions(fields[2:])
	m.extensions = exts
	return m, err
}

// clientFinal is channel-binding "," nonce ["," extensions] "," proof.
type clientFinal struct {
	channelBinding []byte
	nonce          string
	withoutProof   string // client-final-message-without-proof, for AuthMessage
	proof          []byte
}

func parseClientFinal(msg string) (clientFinal, error) {
	var m clientFinal
	fields := strings.Split(msg, ",")
	if len(fields) < 3 {
		return m, errFormat
	}
	cb, okC := strings.CutPrefix(fields[0], "c=")
	nonce, okR := strings.CutPrefix(fields[1], "r=")
	proof, okP := strings.CutPrefix(fields[len(fields)-1], "p=")
	if !okC || !okR || !okP || !isPrintable(nonce) {
		return m, errFormat
	}
	if _, err := parseExtensions(fields[2 : len(fields)-1]); err != nil {
		return m, err
	}
	var err1, err2 error
	m.channelBinding, err1 = decodeBase64(cb)
	m.proof, err2 = decodeBase64(proof)
	if err1 != nil || err2 != nil {
		return m, errFormat
	}
	m.nonce = nonce
	m.withoutProof = msg[:len(msg)-len(proof)-len(",p=")]
	return m, nil
}

// parseExtensions reads "key=value" fields: key ALPHA, value VALUE.
func parseExtensions(fields []string) (map[string]string, error) {
	exts := map[string]string{}
	for _, f := range fields {
		k, v, ok := strings.Cut(f, "=")
		if !ok || !isAlpha(k) || !isValue(v) {
			return nil, errFormat
		}
		exts[k] = v
	}
	return exts, nil
}

// scramUsername decodes a saslname (=2C is ',', =3D is '='), as Kafka's
// ScramFormatter.username.
func scramUsername(saslName string) (string, error) {
	name := strings.ReplaceAll(saslName, "=2C", ",")
	if strings.Contains(strings.ReplaceAll(name, "=3D", ""), "=") {
		return "", errFormat
	}
	return strings.ReplaceAll(name, "=3D", "="), nil
}

// isSaslName: one or more of %x01-7F but '=' and ',', or "=2C", "=3D".
func isSaslName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '=':
			if !strings.HasPrefix(s[i:], "=2C") && !strings.HasPrefix(s[i:], "=3D") {
				return false
			}
			i += 2
		case c == 0 || c > 0x7F || c == ',':
			return false
		}
	}
	return true
}

// isValue: one or more of %x01-7F but ','.
func isValue(s string) bool {
	return s != "" && !strings.ContainsFunc(s, func(r rune) bool { return r == 0 || r > 0x7F || r == ',' })
}

// isPrintable: one or more of %x21-7E but ','.
func isPrintable(s string) bool {
	return s != "" && !strings.ContainsFunc(s, func(r rune) bool { return r < 0x21 || r > 0x7E || r == ',' })
}

func isAlpha(s string) bool {
	return s != "" && !strings.ContainsFunc(s, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') })
}

// decodeBase64 decodes padded standard base64, refusing the line breaks Go's
// decoder would skip.
func decodeBase64(s string) ([]byte, error) {
	if strings.ContainsAny(s, "\r\n") {
		return nil, errFormat
	}
	return base64.StdEncoding.DecodeString(s)
}
