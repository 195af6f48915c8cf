package acl

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/sluice-io/sluice/internal/auth"
	"github.com/sluice-io/sluice/internal/metadata"
)

// The golden files (testdata/*) drive the authorizer:
//
//	config [super=User:a;User:b] [allow-if-no-acl=true]
//	acls                      (one binding a line, replacing the image's:
//	TYPE PATTERN NAME PRINCIPAL HOST OP PERM)
//	authorize principal=User:x host=H
//	OP TYPE NAME              (one action a line; prints ALLOWED or DENIED)
//	by-type principal=User:x host=H
//	OP TYPE                   (authorizeByResourceType)
//	operations principal=User:x host=H
//	TYPE NAME                 (KIP-430 bit field, as the operation names)
func TestAuthorizer(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		img := metadata.EmptyImage()
		opts := Options{}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			a := New(opts, func() Bindings { return img })
			switch d.Cmd {
			case "config":
				opts = Options{}
				var s string
				if d.MaybeScanArgs(t, "super", &s) {
					users, err := ParseSuperUsers(s)
					if err != nil {
						return err.Error()
					}
					opts.SuperUsers = users
				}
				d.MaybeScanArgs(t, "allow-if-no-acl", &opts.AllowIfNoACL)
				return fmt.Sprintf("super=%v allow-if-no-acl=%v", opts.SuperUsers, opts.AllowIfNoACL)
			case "acls":
				next, err := imageOf(d.Input)
				if err != nil {
					return err.Error()
				}
				img = next
				return fmt.Sprintf("%d bindings", img.ACLCount())
			case "authorize", "by-type", "operations":
				return runActions(t, d, a)
			}
			t.Fatalf("unknown command %s", d.Cmd)
			return ""
		})
	})
}

func runActions(t *testing.T, d *datadriven.TestData, a *Authorizer) string {
	var principal, host string
	d.ScanArgs(t, "principal", &principal)
	d.ScanArgs(t, "host", &host)
	p, err := auth.ParsePrincipal(principal)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
		f := strings.Fields(line)
		var verdict string
		switch d.Cmd {
		case "authorize":
			verdict = verdictOf(a.Authorize(p, host, op(t, f[0]), resourceType(t, f[1]), f[2]))
		case "by-type":
			verdict = verdictOf(a.AuthorizeByResourceType(p, host, op(t, f[0]), resourceType(t, f[1])))
		case "operations":
			verdict = opNames(a.AuthorizedOperations(p, host, resourceType(t, f[0]), f[1]))
		}
		fmt.Fprintf(&out, "%s: %s\n", line, verdict)
	}
	return out.String()
}

func verdictOf(ok bool) string {
	if ok {
		return "ALLOWED"
	}
	return "DENIED"
}

func opNames(bits int32) string {
	var names []string
	for o := metadata.ACLOpAll; o <= metadata.ACLOpTwoPhaseCommit; o++ {
		if bits&(1<<o) != 0 {
			names = append(names, o.String())
		}
	}
	return "[" + strings.Join(names, " ") + "]"
}

func imageOf(input string) (*metadata.Image, error) {
	delta := metadata.NewDelta(metadata.EmptyImage())
	for i, line := range strings.Split(strings.TrimSpace(input), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) != 7 {
			return nil, fmt.Errorf("line %q: want TYPE PATTERN NAME PRINCIPAL HOST OP PERM", line)
		}
		b := metadata.ACLBinding{
			Resource: metadata.ACLResource{Type: metadata.ACLResourceType(code(f[0], "TYPE")),
				PatternType: metadata.ACLPatternType(code(f[1], "PATTERN")), Name: f[2]},
			Entry: metadata.ACLEntry{Principal: f[3], Host: f[4], Operation: metadata.ACLOperation(code(f[5], "OP")),
				Permission: metadata.ACLPermission(code(f[6], "PERM"))},
		}
		if err := delta.Replay(int64(i+1), 1, &metadata.AccessControlEntryRecord{Binding: b}); err != nil {
			return nil, err
		}
	}
	return delta.Apply(), nil
}

// code finds a Kafka name among the codes of its kind.
func code(name, kind string) int8 {
	for c := int8(0); c < 16; c++ {
		var s string
		switch kind {
		case "TYPE":
			s = metadata.ACLResourceType(c).String()
		case "PATTERN":
			s = metadata.ACLPatternType(c).String()
		case "OP":
			s = metadata.ACLOperation(c).String()
		case "PERM":
			s = metadata.ACLPermission(c).String()
		}
		if s == name {
			return c
		}
	}
	return 0
}

func op(t *testing.T, s string) metadata.ACLOperation {
	c := code(s, "OP")
	if c == 0 {
		t.Fatalf("unknown operation %s", s)
	}
	return metadata.ACLOperation(c)
}

func resourceType(t *testing.T, s string) metadata.ACLResourceType {
	c := code(s, "TYPE")
	if c == 0 {
		t.Fatalf("unknown resource type %s", s)
	}
	return metadata.ACLResourceType(c)
}

func TestHostAddress(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1":          "127.0.0.1",
		"::ffff:10.1.2.3":    "10.1.2.3",
		"::1":                "0:0:0:0:0:0:0:1",
		"fe80::1%eth0":       "fe80:0:0:0:0:0:0:1%eth0",
		"2001:db8::abcd:0:1": "2001:db8:0:0:0:abcd:0:1",
	} {
		if got := HostAddress(netip.MustParseAddr(in)); got != want {
			t.Errorf("HostAddress(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestParseSuperUsers(t *testing.T) {
	got, err := ParseSuperUsers(" User:alice ; ;User:chris;")
	if err != nil || strconv.Quote(strings.Join(got, ",")) != `"User:alice,User:chris"` {
		t.Fatalf("got %v, %v", got, err)
	}
	if _, err := ParseSuperUsers("alice"); err == nil {
		t.Fatal("a super user without a type was accepted")
	}
}
