package config

import (
	"strings"
	"testing"
)

func TestAuthorizerSettings(t *testing.T) {
	c, err := Parse("authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer\n"+
		"super.users=User:admin;User:broker\nallow.everyone.if.no.acl.found=TRUE\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	got := c.Authorizer()
	if !got.Enabled || got.SuperUsers != "User:admin;User:broker" || !got.AllowIfNoACL {
		t.Fatalf("settings %+v", got)
	}
	c, err = Parse("super.users=User:admin\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Authorizer(); got.Enabled || got.AllowIfNoACL {
		t.Fatalf("no class: %+v", got)
	}
	c, err = Parse("authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer\nallow.everyone.if.no.acl.found=yes\n", nil)
	if err != nil || c.Authorizer().AllowIfNoACL {
		t.Fatalf("allow.everyone.if.no.acl.found=yes is false in Java: %v %+v", err, c)
	}
}

func TestAuthorizerRefusals(t *testing.T) {
	for text, key := range map[string]string{
		"authorizer.class.name=kafka.security.authorizer.AclAuthorizer\n":                                    "authorizer.class.name",
		"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer\nsuper.users=admin\n": "super.users",
	} {
		_, err := Parse(text, nil)
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%q: want an error naming %s, got %v", text, key, err)
		}
	}
}
