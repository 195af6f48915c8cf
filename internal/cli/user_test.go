package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/testutil"
)

// sluice user create, list, alter and delete against a real server: one
// AlterUserScramCredentials per mechanism (Kafka refuses a user twice in a
// request), the password from a file or standard input, never an argument,
// and never shown. test/security logs in as a user the CLI created.
func TestUserLifecycle(t *testing.T) {
	addr := shared.broker(t)
	b := []string{"--brokers", addr}
	user := "u" + strings.ReplaceAll(uniqueTopic(t), "-", "")
	pwFile := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pwFile, []byte("first-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	out := mustRun(t, "", append([]string{"user", "create", user, "--password-file", pwFile}, b...)...)
	if !strings.Contains(out, "created "+user+": SCRAM-SHA-256 (4096 iterations)") || !strings.Contains(out, "created "+user+": SCRAM-SHA-512") {
		t.Fatalf("create printed %q", out)
	}
	if _, err := runCLI(t, "", append([]string{"user", "create", user, "--password-file", pwFile}, b...)...); err == nil ||
		!strings.Contains(err.Error(), "already has a SCRAM-SHA-256 credential") {
		t.Fatalf("creating an existing user: %v", err)
	}
	// The broker answers from its published metadata image, which follows
	// the controller's commit.
	listShows := func(what string, rows ...[]string) {
		t.Helper()
		testutil.EventuallyNoError(t, 10*time.Second, lastOutput(func() (bool, string) {
			out, err := runCLI(t, "", append([]string{"user", "list", user}, b...)...)
			if err != nil {
				return false, err.Error()
			}
			for _, r := range rows {
				if !hasRow(out, r...) {
					return false, out
				}
			}
			return !strings.Contains(out, "secret"), out
		}), "user list %s", what)
	}
	listShows("after create", []string{user, "SCRAM-SHA-256", "4096"}, []string{user, "SCRAM-SHA-512", "4096"})

	out = mustRun(t, "second-secret\n", append([]string{"user", "alter", user, "--password-stdin", "--mechanism", "SCRAM-SHA-512", "--iterations", "8192"}, b...)...)
	if out != "altered "+user+": SCRAM-SHA-512 (8192 iterations)\n" {
		t.Fatalf("alter printed %q", out)
	}
	listShows("after alter", []string{user, "SCRAM-SHA-512", "8192"}, []string{user, "SCRAM-SHA-256", "4096"})

	out = mustRun(t, "", append([]string{"user", "delete", user, "--mechanism", "SCRAM-SHA-256"}, b...)...)
	if out != "deleted "+user+": SCRAM-SHA-256\n" {
		t.Fatalf("delete printed %q", out)
	}
	testutil.EventuallyNoError(t, 10*time.Second, lastOutput(func() (bool, string) {
		out, err := runCLI(t, "", append([]string{"user", "list", user}, b...)...)
		return err == nil && !strings.Contains(out, "SCRAM-SHA-256") && hasRow(out, user, "SCRAM-SHA-512", "8192"), out
	}), "user list after deleting SCRAM-SHA-256")
	if _, err := runCLI(t, "", append([]string{"user", "alter", user, "--password-file", pwFile, "--mechanism", "SCRAM-SHA-256"}, b...)...); err == nil ||
		!strings.Contains(err.Error(), "has no SCRAM-SHA-256 credential") {
		t.Fatalf("altering a deleted mechanism: %v", err)
	}
	mustRun(t, "", append([]string{"user", "delete", user}, b...)...)
	testutil.EventuallyNoError(t, 10*time.Second, lastOutput(func() (bool, string) {
		out, err := runCLI(t, "", append([]string{"user", "list", user}, b...)...)
		return err != nil && strings.Contains(err.Error(), "RESOURCE_NOT_FOUND"), out
	}), "user list after deleting every credential")
	for _, args := range [][]string{
		{"user", "create", user},
		{"user", "create", user, "--password-file", pwFile, "--mechanism", "SCRAM-SHA-1"},
		{"user", "delete", user},
	} {
		if _, err := runCLI(t, "", append(args, b...)...); err == nil {
			t.Errorf("%v succeeded", args)
		}
	}
}
