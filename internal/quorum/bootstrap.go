package quorum

import (
	"fmt"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// maybeBootstrap writes a new dynamic quorum's bootstrap entries (the
// initial voters of storage format --standalone or --initial-controllers)
// into an empty log, committed, as etcd Raft's Bootstrap does; they are
// then replayed like any committed entries. A log or hard state that holds
// anything is left as it is.
func (v *Voter) maybeBootstrap(entries []*raftpb.Entry, hs *raftpb.HardState) ([]*raftpb.Entry, *raftpb.HardState, error) {
	opts := v.opts
	if !opts.Dynamic || len(opts.Bootstrap) == 0 || len(entries) > 0 || v.storage.offset > 0 || hs.GetTerm() > 0 {
		return entries, hs, nil
	}
	boot, err := bootstrapEntries(opts.Bootstrap)
	if err != nil {
		return nil, nil, err
	}
	if err := opts.Store.Append(boot); err != nil {
		return nil, nil, fmt.Errorf("quorum: write bootstrap voters: %w", err)
	}
	hs = &raftpb.HardState{Term: proto.Uint64(1), Commit: proto.Uint64(uint64(len(boot)))}
	if err := writeHardState(opts.FS, opts.Dir, hs); err != nil {
		return nil, nil, err
	}
	v.storage.hard = hs
	v.log.Info("metadata quorum bootstrapped", "voters", Membership{Members: opts.Bootstrap}.VoterKeys())
	return boot, hs, nil
}

// soleVoter reports whether this node is the only voter of its applied
// configuration (it need not wait out an election timeout).
func (v *Voter) soleVoter() bool {
	vs := v.storage.conf.GetVoters()
	return len(vs) == 1 && vs[0] == RaftID(v.opts.NodeID) && len(v.storage.conf.GetVotersOutgoing()) == 0
}
