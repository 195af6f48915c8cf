package quorum

import (
	"fmt"
	"maps"
	"slices"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// An observer of a dynamic quorum knows no voter at first: it fetches from
// the bootstrap servers (as Kafka's observers do, under the ids -1, -2,
// ...) until one leads, and learns the voters' addresses from the
// membership each configuration change entry (and each snapshot) carries,
// so it follows the leader to controllers added later.

func initialAddrs(opts ObserverOptions) map[int32]string {
	out := maps.Clone(opts.Voters)
	if out == nil {
		out = map[int32]string{}
	}
	for i, addr := range opts.Bootstrap {
		out[-1-int32(i)] = addr
	}
	return out
}

func (o *Observer) addr(id int32) (string, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	a, ok := o.addrs[id]
	return a, ok
}

// targets are the ids to try, in order, while no reachable leader is known.
func (o *Observer) targets() []int32 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Sorted(maps.Keys(o.addrs))
}

// applyConf takes the membership of a configuration change entry.
func (o *Observer) applyConf(e *raftpb.Entry) error {
	var ctx []byte
	switch e.GetType() {
	case raftpb.EntryConfChange:
		cc := &raftpb.ConfChange{}
		if err := proto.Unmarshal(e.GetData(), cc); err != nil {
			return fmt.Errorf("conf change at offset %d: %w", e.GetIndex()-1, err)
		}
		ctx = cc.GetContext()
	case raftpb.EntryConfChangeV2:
		cc := &raftpb.ConfChangeV2{}
		if err := proto.Unmarshal(e.GetData(), cc); err != nil {
			return fmt.Errorf("conf change at offset %d: %w", e.GetIndex()-1, err)
		}
		ctx = cc.GetContext()
	}
	if len(ctx) == 0 {
		return nil
	}
	ms, err := DecodeMembership(ctx)
	if err != nil {
		return err
	}
	o.setMembership(ms)
	return nil
}

// setMembership makes the members' addresses the voters' (the bootstrap
// servers stay, for when no member answers).
func (o *Observer) setMembership(ms Membership) {
	o.mu.Lock()
	addrs := initialAddrs(ObserverOptions{Bootstrap: o.opts.Bootstrap})
	for id, a := range ms.Addrs(o.opts.Listener) {
		addrs[id] = a
	}
	o.addrs = addrs
	o.mu.Unlock()
	if o.opts.OnMembership != nil {
		o.opts.OnMembership(ms)
	}
}
