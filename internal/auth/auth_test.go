package auth

import "testing"

func TestPrincipalString(t *testing.T) {
	if got := User("alice").String(); got != "User:alice" {
		t.Errorf("User(alice) = %q", got)
	}
	if got := Anonymous.String(); got != "User:ANONYMOUS" {
		t.Errorf("Anonymous = %q", got)
	}
	if !(Principal{}).IsZero() || Anonymous.IsZero() {
		t.Error("IsZero")
	}
}

func TestParsePrincipal(t *testing.T) {
	p, err := ParsePrincipal("User:CN=alice,O=Org")
	if err != nil || p != (Principal{Type: "User", Name: "CN=alice,O=Org"}) {
		t.Errorf("ParsePrincipal = %v, %v", p, err)
	}
	for _, bad := range []string{"alice", ":alice", "User:", ""} {
		if _, err := ParsePrincipal(bad); err == nil {
			t.Errorf("ParsePrincipal(%q) accepted", bad)
		}
	}
}
