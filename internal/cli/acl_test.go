package cli

import (
	"strings"
	"testing"
)

// TestACLCommands: create (operations, --consumer, a prefixed deny), list
// (every binding, by resource, by principal) and delete with kafka-acls'
// vocabulary against a real server; bad flags are one-line errors.
func TestACLCommands(t *testing.T) {
	addr := shared.broker(t)
	b := []string{"--brokers", addr}
	topic := uniqueTopic(t)
	run := func(args ...string) string { t.Helper(); return mustRun(t, "", append(args, b...)...) }
	out := run("acl", "create", "--allow-principal", "User:alice", "--operation", "Read", "--operation", "Describe", "--topic", topic)
	if strings.Count(out, "created ") != 2 {
		t.Fatalf("create printed:\n%s", out)
	}
	run("acl", "create", "--allow-principal", "User:bob", "--consumer", "--topic", topic, "--group", topic+"-g")
	run("acl", "create", "--deny-principal", "User:*", "--deny-host", "10.0.0.9", "--operation", "All",
		"--topic", topic[:4], "--resource-pattern-type", "prefixed")

	all := run("acl", "list")
	for _, want := range []string{
		"TOPIC  " + topic + "  LITERAL  User:alice  *  READ  ALLOW",
		"TOPIC  " + topic + "  LITERAL  User:bob  *  DESCRIBE  ALLOW",
		"GROUP  " + topic + "-g  LITERAL  User:bob  *  READ  ALLOW",
		"TOPIC  " + topic[:4] + "  PREFIXED  User:*  10.0.0.9  ALL  DENY",
	} {
		if !containsSpaced(all, want) {
			t.Errorf("list lacks %q:\n%s", want, all)
		}
	}
	if byAlice := run("acl", "list", "--principal", "User:alice"); strings.Contains(byAlice, "User:bob") || !strings.Contains(byAlice, "User:alice") {
		t.Errorf("list --principal User:alice:\n%s", byAlice)
	}
	if match := run("acl", "list", "--topic", topic, "--resource-pattern-type", "match"); !strings.Contains(match, "PREFIXED") || !strings.Contains(match, "User:alice") {
		t.Errorf("MATCH on the topic should show the literal and the prefixed bindings:\n%s", match)
	}

	del := run("acl", "delete", "--allow-principal", "User:alice", "--operation", "Read", "--topic", topic)
	if strings.Count(del, "deleted ") != 1 {
		t.Fatalf("delete printed:\n%s", del)
	}
	run("acl", "delete", "--topic", topic)
	run("acl", "delete", "--group", topic+"-g")
	run("acl", "delete", "--topic", topic[:4], "--resource-pattern-type", "prefixed")
	if left := run("acl", "list", "--topic", topic, "--resource-pattern-type", "match"); strings.Contains(left, "ALLOW") || strings.Contains(left, "DENY") {
		t.Errorf("bindings left after delete:\n%s", left)
	}

	for _, bad := range [][]string{
		{"acl", "create", "--topic", topic, "--operation", "Read"},
		{"acl", "create", "--allow-principal", "User:a", "--operation", "Fly", "--topic", topic},
		{"acl", "create", "--allow-principal", "User:a", "--operation", "Read"},
		{"acl", "create", "--allow-principal", "User:a", "--operation", "Read", "--topic", topic, "--resource-pattern-type", "any"},
		{"acl", "delete", "--operation", "Read"},
	} {
		out, err := runCLI(t, "", append(bad, b...)...)
		if err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("sluice %s: want a one-line error, got %v\n%s", strings.Join(bad, " "), err, out)
		}
	}
}

// containsSpaced reports whether s has a line whose fields are want's.
func containsSpaced(s, want string) bool {
	w := strings.Fields(want)
	for _, line := range strings.Split(s, "\n") {
		if strings.Join(strings.Fields(line), " ") == strings.Join(w, " ") {
			return true
		}
	}
	return false
}
