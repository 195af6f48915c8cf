package integration

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/testutil"
)

// TestSecurityMetadataSurvivesRestart: SCRAM credentials, ACLs and client
// quotas written with franz-go's kadm are read back, and are still there
// after a clean restart (from a metadata snapshot, which the server takes
// after every entry here) and after a kill -9.
func TestSecurityMetadataSurvivesRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dataDir := t.TempDir()
	port := freePort(t)
	overrides := []string{"metadata.log.max.record.bytes.between.snapshots=1"}
	srv := startServer(t, dataDir, port, overrides...)
	adm := kadm.NewClient(newClient(t, srv.addr))

	writeSCRAMs(t, ctx, adm)
	writeACLs(t, ctx, adm)
	writeQuotas(t, ctx, adm)
	want := readSecurity(t, ctx, adm)
	t.Logf("security metadata:\n%s", want)

	testutil.Eventually(t, 30*time.Second, func() bool {
		names, _ := filepath.Glob(filepath.Join(dataDir, "__cluster_metadata-0", "*.checkpoint"))
		return len(names) > 0
	}, "no metadata snapshot in %s", dataDir)
	srv.stop()
	srv = startServer(t, dataDir, port, overrides...)
	adm = kadm.NewClient(newClient(t, srv.addr))
	if got := readSecurity(t, ctx, adm); got != want {
		t.Fatalf("after a restart:\n%s\nwant:\n%s", got, want)
	}

	srv.kill()
	srv = startServer(t, dataDir, port, overrides...)
	adm = kadm.NewClient(newClient(t, srv.addr))
	if got := readSecurity(t, ctx, adm); got != want {
		t.Fatalf("after kill -9:\n%s\nwant:\n%s", got, want)
	}
	srv.stop()
}

func writeSCRAMs(t *testing.T, ctx context.Context, adm *kadm.Client) {
	t.Helper()
	altered, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{
		{User: "alice", Mechanism: kadm.ScramSha256, Iterations: 8192, Password: "alice-secret"},
		{User: "bob", Mechanism: kadm.ScramSha512, Password: "bob-secret"},
		{User: "carol", Mechanism: kadm.ScramSha256, Password: "carol-secret"},
	})
	if err != nil || !altered.Ok() {
		t.Fatalf("alter scram: %v %+v", err, altered)
	}
	// A second mechanism for alice; carol's only credential removed.
	altered, err = adm.AlterUserSCRAMs(ctx, []kadm.DeleteSCRAM{{User: "carol", Mechanism: kadm.ScramSha256}},
		[]kadm.UpsertSCRAM{{User: "alice", Mechanism: kadm.ScramSha512, Iterations: 16384, Password: "alice-secret"}})
	if err != nil || !altered.Ok() {
		t.Fatalf("alter scram again: %v %+v", err, altered)
	}
	// Kafka's refusals.
	altered, err = adm.AlterUserSCRAMs(ctx, []kadm.DeleteSCRAM{{User: "nobody", Mechanism: kadm.ScramSha256}},
		[]kadm.UpsertSCRAM{{User: "dave", Mechanism: kadm.ScramSha256, Iterations: 4096, Salt: []byte("s"), SaltedPassword: []byte("p")}})
	if err != nil || !errors.Is(altered["nobody"].Err, kerr.ResourceNotFound) || altered["dave"].Err != nil {
		t.Fatalf("delete a missing credential: %v %+v", err, altered)
	}
	altered, err = adm.AlterUserSCRAMs(ctx, []kadm.DeleteSCRAM{{User: "dave", Mechanism: kadm.ScramSha256}},
		[]kadm.UpsertSCRAM{{User: "dave", Mechanism: kadm.ScramSha512, Iterations: 4096, Salt: []byte("s"), SaltedPassword: []byte("p")}})
	if err != nil || !errors.Is(altered["dave"].Err, kerr.DuplicateResource) {
		t.Fatalf("a user twice: %v %+v", err, altered)
	}
	described, err := adm.DescribeUserSCRAMs(ctx, "carol")
	if err != nil || !errors.Is(described["carol"].Err, kerr.ResourceNotFound) {
		t.Fatalf("describe a removed user: %v %+v", err, described)
	}
}

func writeACLs(t *testing.T, ctx context.Context, adm *kadm.Client) {
	t.Helper()
	for _, b := range []*kadm.ACLBuilder{
		kadm.NewACLs().Allow("User:alice").AllowHosts().Topics("orders").ResourcePatternType(kadm.ACLPatternLiteral).Operations(kadm.OpRead, kadm.OpDescribe),
		kadm.NewACLs().Deny("User:bob").DenyHosts("10.0.0.1").Topics("ord").ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpWrite),
		kadm.NewACLs().Allow("User:alice").AllowHosts().Groups("*").ResourcePatternType(kadm.ACLPatternLiteral).Operations(kadm.OpRead),
		kadm.NewACLs().Allow("User:admin").AllowHosts().Clusters().ResourcePatternType(kadm.ACLPatternLiteral).Operations(kadm.OpAlter),
		kadm.NewACLs().Allow("User:temp").AllowHosts().TransactionalIDs("tx").ResourcePatternType(kadm.ACLPatternLiteral).Operations(kadm.OpWrite),
	} {
		created, err := adm.CreateACLs(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range created {
			if c.Err != nil {
				t.Fatalf("create acl %+v: %v %s", c, c.Err, c.ErrMessage)
			}
		}
	}
	// MATCH finds the literal and the prefixed bindings that apply to orders.
	described, err := adm.DescribeACLs(ctx, kadm.NewACLs().Topics("orders").ResourcePatternType(kadm.ACLPatternMatch).
		Operations(kadm.OpAny).Allow().Deny().AllowHosts().DenyHosts())
	if err != nil || len(described) != 1 || described[0].Err != nil || len(described[0].Described) != 3 {
		t.Fatalf("describe orders with MATCH: %v %+v", err, described)
	}
	deleted, err := adm.DeleteACLs(ctx, kadm.NewACLs().TransactionalIDs("tx").ResourcePatternType(kadm.ACLPatternAny).
		Operations(kadm.OpAny).Allow().Deny().AllowHosts().DenyHosts())
	if err != nil || len(deleted) != 1 || deleted[0].Err != nil || len(deleted[0].Deleted) != 1 {
		t.Fatalf("delete the transactional id's acl: %v %+v", err, deleted)
	}
}

func writeQuotas(t *testing.T, ctx context.Context, adm *kadm.Client) {
	t.Helper()
	name := func(s string) *string { return &s }
	altered, err := adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{
		{Entity: kadm.ClientQuotaEntity{{Type: "user", Name: name("alice")}}, Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 1024}}},
		{Entity: kadm.ClientQuotaEntity{{Type: "client-id", Name: nil}}, Ops: []kadm.AlterClientQuotaOp{{Key: "consumer_byte_rate", Value: 2048}}},
		{Entity: kadm.ClientQuotaEntity{{Type: "user", Name: name("alice")}, {Type: "client-id", Name: name("c1")}},
			Ops: []kadm.AlterClientQuotaOp{{Key: "request_percentage", Value: 50}, {Key: "controller_mutation_rate", Value: 10}}},
		{Entity: kadm.ClientQuotaEntity{{Type: "user", Name: nil}}, Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 512}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range altered {
		if a.Err != nil {
			t.Fatalf("alter quotas %s: %v %s", a.Entity, a.Err, a.ErrMessage)
		}
	}
	altered, err = adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{
		{Entity: kadm.ClientQuotaEntity{{Type: "user", Name: nil}}, Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Remove: true}}},
		{Entity: kadm.ClientQuotaEntity{{Type: "user", Name: name("bob")}}, Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: -1}}},
	})
	if err != nil || len(altered) != 2 || altered[0].Err != nil || !errors.Is(altered[1].Err, kerr.InvalidRequest) {
		t.Fatalf("remove and refuse: %v %+v", err, altered)
	}
}

// readSecurity prints every credential, binding and quota the server
// describes, sorted, so two reads compare as strings.
func readSecurity(t *testing.T, ctx context.Context, adm *kadm.Client) string {
	t.Helper()
	var lines []string
	scrams, err := adm.DescribeUserSCRAMs(ctx)
	if err != nil || !scrams.Ok() {
		t.Fatalf("describe scram: %v %+v", err, scrams)
	}
	for _, d := range scrams.Sorted() {
		lines = append(lines, fmt.Sprintf("scram %s %v", d.User, d.CredInfos))
	}
	acls, err := adm.DescribeACLs(ctx, kadm.NewACLs().AnyResource().ResourcePatternType(kadm.ACLPatternAny).
		Operations(kadm.OpAny).Allow().Deny().AllowHosts().DenyHosts())
	if err != nil || len(acls) != 1 || acls[0].Err != nil {
		t.Fatalf("describe acls: %v %+v", err, acls)
	}
	for _, a := range acls[0].Described {
		lines = append(lines, fmt.Sprintf("acl %s %s %s %s %s %s %s", a.Type, a.Pattern, a.Name, a.Principal, a.Host, a.Operation, a.Permission))
	}
	quotas, err := adm.DescribeClientQuotas(ctx, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range quotas {
		lines = append(lines, fmt.Sprintf("quota %s %v", q.Entity, q.Values))
	}
	slices.Sort(lines)
	out := strings.Join(lines, "\n")
	for _, want := range []string{
		"scram alice [SCRAM-SHA-256=iterations=8192 SCRAM-SHA-512=iterations=16384]",
		"scram bob [SCRAM-SHA-512=iterations=4096]",
		"scram dave [SCRAM-SHA-256=iterations=4096]",
		"acl TOPIC PREFIXED ord User:bob 10.0.0.1 WRITE DENY",
		"acl CLUSTER LITERAL kafka-cluster User:admin * ALTER ALLOW",
		"quota {client-id=<default>} [consumer_byte_rate=2048.000000]",
		"quota {client-id=c1, user=alice} [controller_mutation_rate=10.000000 request_percentage=50.000000]",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("no %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "carol") || strings.Contains(out, "TRANSACTIONAL_ID") || strings.Contains(out, "{user=<default>}") || len(lines) != 11 {
		t.Fatalf("removed entries described, or %d lines:\n%s", len(lines), out)
	}
	return out
}
