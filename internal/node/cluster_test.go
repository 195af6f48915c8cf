package node

import (
	"strings"
	"testing"

	"github.com/sluice-io/sluice/internal/config"
)

func TestMultiVoterNodeNeedsFormattedDirs(t *testing.T) {
	cfg, err := config.Parse("", map[string]string{
		"process.roles":             "broker,controller",
		"node.id":                   "1",
		"log.dirs":                  t.TempDir(),
		"listeners":                 "PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:0",
		"advertised.listeners":      "PLAINTEXT://127.0.0.1:0",
		"controller.listener.names": "CONTROLLER",
		"controller.quorum.voters":  "1@127.0.0.1:19301,2@127.0.0.1:19302,3@127.0.0.1:19303",
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(cfg, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "sluice storage format") {
		t.Fatalf("unformatted dirs of a 3-voter node: %v, want a request to run sluice storage format", err)
	}
}
