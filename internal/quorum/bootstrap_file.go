package quorum

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/sluice-io/sluice/internal/vfs"
)

// BootstrapVotersFile is what storage format writes into a dynamic
// controller's metadata log partition directory (__cluster_metadata-0):
// Sluice's counterpart of Kafka's 00000000000000000000-0000000000.checkpoint
// with its KRaftVersionRecord and VotersRecord. JSON:
// {"kraft_version":1,"voters":[{"id":1,"directory_id":"...","endpoints":[{"name":"CONTROLLER","host":"h","port":9093}]}]}.
// voters is empty after --no-initial-controllers (the controller joins an
// existing quorum); the voter that starts on an empty log with voters
// writes them as its first entries (bootstrapEntries).
const BootstrapVotersFile = "bootstrap-voters.json"

// BootstrapVoters is the file's content.
type BootstrapVoters struct {
	KRaftVersion int16    `json:"kraft_version"`
	Voters       []Member `json:"voters"`
}

// WriteBootstrapVoters writes partitionDir/bootstrap-voters.json durably.
func WriteBootstrapVoters(fsys vfs.FS, partitionDir string, b BootstrapVoters) error {
	if b.Voters == nil {
		b.Voters = []Member{}
	}
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return fmt.Errorf("quorum: encode %s: %w", BootstrapVotersFile, err)
	}
	if err := fsys.MkdirAll(partitionDir, 0o755); err != nil {
		return fmt.Errorf("quorum: create %s: %w", partitionDir, err)
	}
	if err := vfs.WriteFileAtomic(fsys, filepath.Join(partitionDir, BootstrapVotersFile), data); err != nil {
		return fmt.Errorf("quorum: write %s: %w", BootstrapVotersFile, err)
	}
	return nil
}

// ReadBootstrapVoters reads the file; ok is false when there is none (a
// static quorum's directory, or one formatted before dynamic quorums).
func ReadBootstrapVoters(fsys vfs.FS, partitionDir string) (b BootstrapVoters, ok bool, err error) {
	path := filepath.Join(partitionDir, BootstrapVotersFile)
	data, err := vfs.ReadFile(fsys, path)
	if vfs.IsNotExist(err) {
		return BootstrapVoters{}, false, nil
	}
	if err != nil {
		return BootstrapVoters{}, false, fmt.Errorf("quorum: read %s: %w", path, err)
	}
	if err := json.Unmarshal(data, &b); err != nil {
		return BootstrapVoters{}, false, fmt.Errorf("quorum: parse %s: %w", path, err)
	}
	return b, true, nil
}
