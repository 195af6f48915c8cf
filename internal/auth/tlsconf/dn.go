package tlsconf

import (
	"encoding/asn1"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf16"
)

// The attribute types Java's X500Principal.getName() (RFC 2253 form)
// writes by keyword; every other type is written as its OID with the
// value as # and the hex of its DER encoding.
var rfc2253Keywords = map[string]string{
	"2.5.4.3":                    "CN",
	"2.5.4.6":                    "C",
	"2.5.4.7":                    "L",
	"2.5.4.8":                    "ST",
	"2.5.4.10":                   "O",
	"2.5.4.11":                   "OU",
	"2.5.4.9":                    "STREET",
	"0.9.2342.19200300.100.1.25": "DC",
	"0.9.2342.19200300.100.1.1":  "UID",
}

type attributeTypeAndValue struct {
	Type  asn1.ObjectIdentifier
	Value asn1.RawValue
}

// The SET suffix makes encoding/asn1 read a SET OF.
type relativeDNSET []attributeTypeAndValue

// DistinguishedName renders a certificate's raw subject as Java's
// X500Principal.getName() does, the string Kafka's principal mapping
// rules see: RDNs most specific first ("CN=alice,OU=eng,O=Org,C=US"),
// multi-valued RDNs joined with '+', RFC 2253 escaping.
func DistinguishedName(rawSubject []byte) (string, error) {
	var rdns []relativeDNSET
	rest, err := asn1.Unmarshal(rawSubject, &rdns)
	if err != nil {
		return "", fmt.Errorf("certificate subject: %w", err)
	}
	if len(rest) > 0 {
		return "", fmt.Errorf("certificate subject: trailing data")
	}
	var b strings.Builder
	for i := len(rdns) - 1; i >= 0; i-- {
		if i != len(rdns)-1 {
			b.WriteByte(',')
		}
		for j, atv := range rdns[i] {
			if j > 0 {
				b.WriteByte('+')
			}
			writeAVA(&b, atv)
		}
	}
	return b.String(), nil
}

func writeAVA(b *strings.Builder, atv attributeTypeAndValue) {
	oid := atv.Type.String()
	keyword, ok := rfc2253Keywords[oid]
	value, isString := derString(atv.Value)
	if !ok || !isString {
		if !ok {
			keyword = oid
		}
		b.WriteString(keyword)
		b.WriteString("=#")
		b.WriteString(hex.EncodeToString(atv.Value.FullBytes))
		return
	}
	b.WriteString(keyword)
	b.WriteByte('=')
	b.WriteString(escapeRFC2253(value))
}

// derString decodes the string types Java's AVA treats as strings.
func derString(v asn1.RawValue) (string, bool) {
	if v.Class != asn1.ClassUniversal {
		return "", false
	}
	switch v.Tag {
	case asn1.TagPrintableString, asn1.TagIA5String, asn1.TagUTF8String, asn1.TagGeneralString:
		return string(v.Bytes), true
	case asn1.TagT61String:
		r := make([]rune, len(v.Bytes))
		for i, c := range v.Bytes {
			r[i] = rune(c)
		}
		return string(r), true
	case asn1.TagBMPString:
		if len(v.Bytes)%2 != 0 {
			return "", false
		}
		u := make([]uint16, len(v.Bytes)/2)
		for i := range u {
			u[i] = uint16(v.Bytes[2*i])<<8 | uint16(v.Bytes[2*i+1])
		}
		return string(utf16.Decode(u)), true
	}
	return "", false
}

// escapeRFC2253 escapes as Java's AVA.toRFC2253String: a backslash before
// each of ,=+<>#;"\ , NUL as \00, and leading or trailing spaces (and
// carriage returns) escaped.
func escapeRFC2253(v string) string {
	const escapees = ",=+<>#;\"\\"
	var chars []rune
	for _, c := range v {
		switch {
		case strings.ContainsRune(escapees, c):
			chars = append(chars, '\\', c)
		case c == 0:
			chars = append(chars, '\\', '0', '0')
		default:
			chars = append(chars, c)
		}
	}
	blank := func(c rune) bool { return c == ' ' || c == '\r' }
	lead := 0
	for lead < len(chars) && blank(chars[lead]) {
		lead++
	}
	trail := len(chars) - 1
	for trail >= 0 && blank(chars[trail]) {
		trail--
	}
	var b strings.Builder
	for i, c := range chars {
		if i < lead || i > trail {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}
