package quorum

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-io/sluice/internal/vfs"
)

// QuorumStateFile is the name of the hard-state file in the metadata log
// directory, as Kafka names its own.
const QuorumStateFile = "quorum-state"

// quorumStateVersion is the data_version of the file's JSON.
const quorumStateVersion = 0

// quorumState is the JSON of the quorum-state file: Raft's hard state.
// Kafka's file carries leaderEpoch and votedId; ours carries Raft's term,
// vote (a Raft id, 0 for none) and commit index.
type quorumState struct {
	Term        uint64 `json:"term"`
	Vote        uint64 `json:"vote"`
	Commit      uint64 `json:"commit"`
	DataVersion int    `json:"data_version"`
}

// readHardState reads dir/quorum-state; a missing file is the empty state.
func readHardState(fsys vfs.FS, dir string) (*raftpb.HardState, error) {
	b, err := vfs.ReadFile(fsys, filepath.Join(dir, QuorumStateFile))
	if vfs.IsNotExist(err) {
		return &raftpb.HardState{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("quorum: read %s: %w", QuorumStateFile, err)
	}
	var st quorumState
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("quorum: parse %s: %w", QuorumStateFile, err)
	}
	if st.DataVersion != quorumStateVersion {
		return nil, fmt.Errorf("quorum: %s has data_version %d, this build reads %d", QuorumStateFile, st.DataVersion, quorumStateVersion)
	}
	return &raftpb.HardState{Term: proto.Uint64(st.Term), Vote: proto.Uint64(st.Vote), Commit: proto.Uint64(st.Commit)}, nil
}

// writeHardState replaces dir/quorum-state atomically and durably.
func writeHardState(fsys vfs.FS, dir string, hs *raftpb.HardState) error {
	b, err := json.Marshal(quorumState{Term: hs.GetTerm(), Vote: hs.GetVote(), Commit: hs.GetCommit(), DataVersion: quorumStateVersion})
	if err != nil {
		return fmt.Errorf("quorum: encode %s: %w", QuorumStateFile, err)
	}
	if err := vfs.WriteFileAtomic(fsys, filepath.Join(dir, QuorumStateFile), b); err != nil {
		return fmt.Errorf("quorum: write %s: %w", QuorumStateFile, err)
	}
	return nil
}
