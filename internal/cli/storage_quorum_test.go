package cli

import (
	"strings"
	"testing"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/quorum"
)

func TestParseInitialControllers(t *testing.T) {
	got, err := ParseInitialControllers("1@h1:9093:3Db5QLSqSZieL3rJBUUegA,2@[::1]:9094:ZVPpTM4ZSH6I2jzDlT9Khg", "CONTROLLER")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != 1 || got[0].Endpoints[0] != (quorum.Endpoint{Name: "CONTROLLER", Host: "h1", Port: 9093}) ||
		got[0].DirectoryID.String() != "3Db5QLSqSZieL3rJBUUegA" || got[1].Endpoints[0].Host != "::1" || got[1].Endpoints[0].Port != 9094 {
		t.Fatalf("%+v", got)
	}
	for arg, want := range map[string]string{
		"1h1:9093:3Db5QLSqSZieL3rJBUUegA":                                   "No @ found",
		"x@h1:9093:3Db5QLSqSZieL3rJBUUegA":                                  "Failed to parse node id",
		"1@h1:3Db5QLSqSZieL3rJBUUegA":                                       "Failed to parse host and port",
		"1@h1:9093:nope":                                                    "Failed to parse directory ID",
		"1@h1:9093:3Db5QLSqSZieL3rJBUUegA,1@h2:9093:ZVPpTM4ZSH6I2jzDlT9Khg": "Node id 1 was specified more than once",
		"1@h1:9093:3Db5QLSqSZieL3rJBUUegA,2@h2:9093:3Db5QLSqSZieL3rJBUUegA": "Directory id 3Db5QLSqSZieL3rJBUUegA was specified more than once",
	} {
		if _, err := ParseInitialControllers(arg, "CONTROLLER"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", arg, err, want)
		}
	}
}

func TestQuorumFormatChecks(t *testing.T) {
	dir, _ := kafka.RandomUUID()
	ctrl := FormatNode{NodeID: 2, Controller: true, ListenerName: "CONTROLLER", MetadataDirID: dir,
		Advertised: []quorum.Endpoint{{Name: "CONTROLLER", Host: "h", Port: 9093}}}
	if _, _, err := (QuorumFormat{}).BootstrapVoters(ctrl); err == nil || !strings.HasPrefix(err.Error(), "Because controller.quorum.voters is not set on this controller") {
		t.Fatalf("no flag on a dynamic controller: %v", err)
	}
	static := ctrl
	static.StaticVoters = true
	if b, _, err := (QuorumFormat{}).BootstrapVoters(static); b != nil || err != nil {
		t.Fatalf("a static controller: %v %v", b, err)
	}
	if _, _, err := (QuorumFormat{Standalone: true}).BootstrapVoters(static); err == nil {
		t.Fatal("--standalone with controller.quorum.voters accepted")
	}
	if _, _, err := (QuorumFormat{Standalone: true, NoInitialControllers: true}).BootstrapVoters(ctrl); err == nil {
		t.Fatal("two flags accepted")
	}
	b, got, err := (QuorumFormat{Standalone: true}).BootstrapVoters(ctrl)
	if err != nil || b.KRaftVersion != 1 || len(b.Voters) != 1 || b.Voters[0].ID != 2 || b.Voters[0].DirectoryID != dir || got != dir {
		t.Fatalf("--standalone: %+v %v %v", b, got, err)
	}
	b, got, err = (QuorumFormat{InitialControllers: "1@h1:9093:3Db5QLSqSZieL3rJBUUegA,2@h2:9093:ZVPpTM4ZSH6I2jzDlT9Khg"}).BootstrapVoters(ctrl)
	if err != nil || len(b.Voters) != 2 || got.String() != "ZVPpTM4ZSH6I2jzDlT9Khg" {
		t.Fatalf("--initial-controllers: %+v %v %v", b, got, err)
	}
	b, got, err = (QuorumFormat{NoInitialControllers: true}).BootstrapVoters(ctrl)
	if err != nil || b.KRaftVersion != 1 || len(b.Voters) != 0 || got != dir {
		t.Fatalf("--no-initial-controllers: %+v %v %v", b, got, err)
	}
	if _, _, err := (QuorumFormat{Standalone: true}).BootstrapVoters(FormatNode{NodeID: 4}); err == nil {
		t.Fatal("--standalone on a broker accepted")
	}
}
