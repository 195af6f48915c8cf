package security

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"sluice/internal/testutil"
)

// A user `sluice user create` stores logs in with SCRAM-SHA-256 and -512
// over SASL_SSL; after `sluice user delete` it is refused.
func TestUserCreatedWithCLILogsIn(t *testing.T) {
	s := startSASLServer(t)
	sluice := func(stdin string, args ...string) {
		t.Helper()
		cmd := exec.Command(binaryPath, append(args, "--brokers", s.plainAddr)...)
		cmd.Stdin = strings.NewReader(stdin)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("sluice %v: %v\n%s", args, err, out)
		}
	}
	sluice("carol-secret-5\n", "user", "create", "carol", "--password-stdin")
	tlsOpt := kgo.DialTLSConfig(s.sslTLS)
	for _, m := range []struct {
		name string
		opt  kgo.Opt
	}{
		{"SCRAM-SHA-256", kgo.SASL(scram.Auth{User: "carol", Pass: "carol-secret-5"}.AsSha256Mechanism())},
		{"SCRAM-SHA-512", kgo.SASL(scram.Auth{User: "carol", Pass: "carol-secret-5"}.AsSha512Mechanism())},
	} {
		testutil.EventuallyNoError(t, 10*time.Second, func() error {
			return metadataWith(t, s.sslAddr, nil, tlsOpt, m.opt)
		}, "carol logs in with %s", m.name)
	}
	sluice("", "user", "delete", "carol")
	testutil.EventuallyNoError(t, 10*time.Second, func() error {
		if err := metadataWith(t, s.sslAddr, nil, tlsOpt, kgo.SASL(scram.Auth{User: "carol", Pass: "carol-secret-5"}.AsSha256Mechanism())); err == nil {
			return errAccepted
		}
		return nil
	}, "carol refused once deleted")
}
