package group

import (
	"bytes"
	"slices"
	"time"
)

// member is one member of a classic group.
type member struct {
	id               string
	instanceID       *string
	clientID         string
	clientHost       string
	sessionTimeout   time.Duration
	rebalanceTimeout time.Duration
	protocolType     string
	protocols        []Protocol
	assignment       []byte

	// joinReply is set while the member waits in a JoinGroup for the
	// rebalance to complete; syncReply while it waits in SyncGroup.
	joinReply func(JoinResult)
	syncReply func(SyncResult)
	// isNew marks a member that joined during the current rebalance; it is
	// dropped if the rebalance does not complete in NewMemberJoinTimeout.
	isNew    bool
	joinedAt time.Time
	// lastHeartbeat starts the session timeout.
	lastHeartbeat time.Time
}

func (m *member) awaitingJoin() bool { return m.joinReply != nil }
func (m *member) awaitingSync() bool { return m.syncReply != nil }

// metadataFor returns the member's subscription for protocol name.
func (m *member) metadataFor(name string) []byte {
	for _, p := range m.protocols {
		if p.Name == name {
			return p.Metadata
		}
	}
	return nil
}

func (m *member) supports(name string) bool {
	return slices.ContainsFunc(m.protocols, func(p Protocol) bool { return p.Name == name })
}

// sameProtocols reports whether a rejoin changes nothing the assignment
// depends on (names, order and metadata).
func (m *member) sameProtocols(ps []Protocol) bool {
	return slices.EqualFunc(m.protocols, ps, func(a, b Protocol) bool {
		return a.Name == b.Name && bytes.Equal(a.Metadata, b.Metadata)
	})
}

// deadline is when the member's session expires.
func (m *member) deadline() time.Time { return m.lastHeartbeat.Add(m.sessionTimeout) }

func cloneProtocols(ps []Protocol) []Protocol {
	out := make([]Protocol, len(ps))
	for i, p := range ps {
		out[i] = Protocol{Name: p.Name, Metadata: bytes.Clone(p.Metadata)}
	}
	return out
}

func strPtr(s string) *string { return &s }

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
