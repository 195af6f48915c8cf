package tlsconf

import (
	"crypto/x509/pkix"
	"encoding/asn1"
	"testing"
)

// The strings Java's X500Principal.getName() gives for these subjects.
func TestDistinguishedNameAsJava(t *testing.T) {
	oidEmail := asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 1}
	oidDC := asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 25}
	cases := []struct {
		name pkix.Name
		want string
	}{
		{pkix.Name{CommonName: "alice", OrganizationalUnit: []string{"eng"}, Organization: []string{"Org"}, Country: []string{"US"}},
			"CN=alice,OU=eng,O=Org,C=US"},
		{pkix.Name{CommonName: "Tkac, Adam", Organization: []string{"a+b=c"}}, `CN=Tkac\, Adam,O=a\+b\=c`},
		{pkix.Name{CommonName: " lead#trail "}, `CN=\ lead\#trail\ `},
		{pkix.Name{CommonName: "bob", ExtraNames: []pkix.AttributeTypeAndValue{{Type: oidEmail, Value: "bob@example.com"}}},
			"1.2.840.113549.1.9.1=#0c0f626f62406578616d706c652e636f6d,CN=bob"},
		{pkix.Name{ExtraNames: []pkix.AttributeTypeAndValue{{Type: oidDC, Value: "com"}, {Type: oidDC, Value: "example"}}},
			"DC=example,DC=com"},
	}
	for _, c := range cases {
		raw, err := asn1.Marshal(c.name.ToRDNSequence())
		if err != nil {
			t.Fatal(err)
		}
		got, err := DistinguishedName(raw)
		if err != nil || got != c.want {
			t.Errorf("DistinguishedName = %q, %v; want %q", got, err, c.want)
		}
	}
}

func TestDistinguishedNameMultiValued(t *testing.T) {
	seq := pkix.RDNSequence{
		{{Type: asn1.ObjectIdentifier{2, 5, 4, 10}, Value: "Org"}},
		{{Type: asn1.ObjectIdentifier{2, 5, 4, 3}, Value: "alice"}, {Type: asn1.ObjectIdentifier{2, 5, 4, 11}, Value: "eng"}},
	}
	raw, err := asn1.Marshal(seq)
	if err != nil {
		t.Fatal(err)
	}
	// The AVAs of a multi-valued RDN come in their DER (sorted) order, as
	// Java reads them.
	if got, err := DistinguishedName(raw); err != nil || got != "OU=eng+CN=alice,O=Org" {
		t.Errorf("DistinguishedName = %q, %v", got, err)
	}
	if _, err := DistinguishedName([]byte{0x30, 0x03, 0x01}); err == nil {
		t.Error("garbage accepted")
	}
}
