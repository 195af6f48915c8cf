package quorum

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/sluice-io/sluice/internal/kafka"
)

// A dynamic quorum (KIP-853) keeps its membership in the log through etcd
// Raft's configuration changes: every EntryConfChange(V2) carries, in its
// Context, the whole Membership after the change (as Kafka's VotersRecord
// carries the whole voter set), so the id, directory id and endpoints of
// each voter are replayed with the log and written into snapshots.

// Endpoint is one listener of a voter (Kafka's VotersRecord endpoint).
type Endpoint struct {
	Name string `json:"name"`
	Host string `json:"host"`
	Port int32  `json:"port"`
}

// Addr is host:port.
func (e Endpoint) Addr() string { return net.JoinHostPort(e.Host, strconv.Itoa(int(e.Port))) }

// Member is one voter (or a voter being added: a Raft learner that is
// catching up) of a dynamic quorum. Its key is (ID, DirectoryID).
type Member struct {
	ID          int32      `json:"id"`
	DirectoryID kafka.UUID `json:"-"`
	Endpoints   []Endpoint `json:"endpoints"`
	// Learner: added as a Raft learner, not yet promoted to voter.
	Learner bool `json:"learner,omitempty"`
}

// MarshalJSON writes the directory id in Kafka's text form.
func (m Member) MarshalJSON() ([]byte, error) {
	type plain Member
	return json.Marshal(struct {
		plain
		Dir string `json:"directory_id"`
	}{plain(m), m.DirectoryID.String()})
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (m *Member) UnmarshalJSON(b []byte) error {
	type plain Member
	var v struct {
		plain
		Dir string `json:"directory_id"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	dir, err := kafka.ParseUUID(v.Dir)
	if err != nil {
		return fmt.Errorf("directory id %q: %w", v.Dir, err)
	}
	*m = Member(v.plain)
	m.DirectoryID = dir
	return nil
}

// Key is Kafka's ReplicaKey text.
func (m Member) Key() string { return ReplicaKeyString(m.ID, m.DirectoryID) }

// ReplicaKeyString renders a voter key as Kafka's ReplicaKey.toString.
func ReplicaKeyString(id int32, dir kafka.UUID) string {
	d := "Optional.empty"
	if !dir.IsZero() {
		d = "Optional[" + dir.String() + "]"
	}
	return fmt.Sprintf("ReplicaKey(id=%d, directoryId=%s)", id, d)
}

// Endpoint returns the member's listener named name, or its first.
func (m Member) Endpoint(name string) (Endpoint, bool) {
	for _, e := range m.Endpoints {
		if e.Name == name {
			return e, true
		}
	}
	if name == "" && len(m.Endpoints) > 0 {
		return m.Endpoints[0], true
	}
	return Endpoint{}, false
}

// Membership is a dynamic quorum's voters and joining learners, in id
// order. Invariant: ids are unique.
type Membership struct {
	Members []Member `json:"members"`
}

// membershipVersion is the JSON's version field.
const membershipVersion = 0

type membershipDoc struct {
	Version int      `json:"version"`
	Members []Member `json:"members"`
}

// Encode is the ConfChange Context form.
func (ms Membership) Encode() []byte {
	b, err := json.Marshal(membershipDoc{Version: membershipVersion, Members: ms.Members})
	if err != nil {
		panic(fmt.Sprintf("quorum: encode membership: %v", err)) // plain data: cannot fail
	}
	return b
}

// DecodeMembership reads a ConfChange Context.
func DecodeMembership(b []byte) (Membership, error) {
	var d membershipDoc
	if err := json.Unmarshal(b, &d); err != nil {
		return Membership{}, fmt.Errorf("quorum: decode membership: %w", err)
	}
	if d.Version != membershipVersion {
		return Membership{}, fmt.Errorf("quorum: membership version %d, this build reads %d", d.Version, membershipVersion)
	}
	ms := Membership{Members: d.Members}
	ms.sort()
	for i := 1; i < len(ms.Members); i++ {
		if ms.Members[i].ID == ms.Members[i-1].ID {
			return Membership{}, fmt.Errorf("quorum: membership names node %d twice", ms.Members[i].ID)
		}
	}
	return ms, nil
}

func (ms *Membership) sort() {
	slices.SortFunc(ms.Members, func(a, b Member) int { return int(a.ID) - int(b.ID) })
}

// Find returns the member with id.
func (ms Membership) Find(id int32) (Member, bool) {
	i := slices.IndexFunc(ms.Members, func(m Member) bool { return m.ID == id })
	if i < 0 {
		return Member{}, false
	}
	return ms.Members[i], true
}

// Voters are the members that vote (not learners).
func (ms Membership) Voters() []Member {
	var out []Member
	for _, m := range ms.Members {
		if !m.Learner {
			out = append(out, m)
		}
	}
	return out
}

// VoterKeys renders the voters' keys as Kafka lists them in its errors.
func (ms Membership) VoterKeys() string {
	var keys []string
	for _, m := range ms.Voters() {
		keys = append(keys, m.Key())
	}
	return "[" + strings.Join(keys, ", ") + "]"
}

// with returns a copy with m put in place of the member of its id.
func (ms Membership) with(m Member) Membership {
	out := Membership{Members: slices.Clone(ms.Members)}
	out.Members = slices.DeleteFunc(out.Members, func(x Member) bool { return x.ID == m.ID })
	out.Members = append(out.Members, m)
	out.sort()
	return out
}

// without returns a copy without the member of id.
func (ms Membership) without(id int32) Membership {
	out := Membership{Members: slices.Clone(ms.Members)}
	out.Members = slices.DeleteFunc(out.Members, func(x Member) bool { return x.ID == id })
	return out
}

// Addrs maps each member's id to its endpoint named listener (or its first).
func (ms Membership) Addrs(listener string) map[int32]string {
	out := map[int32]string{}
	for _, m := range ms.Members {
		if e, ok := m.Endpoint(listener); ok {
			out[m.ID] = e.Addr()
		}
	}
	return out
}

// The snapshot of a dynamic quorum carries its membership ahead of the
// state machine's data, since raftpb.Snapshot has room only for Raft ids:
// membershipMagic, u32 length, the membership JSON, then the data.
var membershipMagic = [8]byte{0xFF, 'S', 'L', 'M', 'E', 'M', 'B', 0}

func wrapSnapshotData(ms Membership, data []byte) []byte {
	enc := ms.Encode()
	out := make([]byte, 0, len(membershipMagic)+4+len(enc)+len(data))
	out = append(out, membershipMagic[:]...)
	out = binary.BigEndian.AppendUint32(out, uint32(len(enc)))
	out = append(out, enc...)
	return append(out, data...)
}

// UnwrapSnapshotData splits a snapshot's data into the membership it
// carries (ok false: a static quorum's snapshot, data unchanged) and the
// state machine's data.
func UnwrapSnapshotData(b []byte) (ms Membership, data []byte, ok bool, err error) {
	if len(b) < len(membershipMagic) || [8]byte(b[:8]) != membershipMagic {
		return Membership{}, b, false, nil
	}
	b = b[8:]
	if len(b) < 4 {
		return Membership{}, nil, false, errors.New("quorum: snapshot membership truncated")
	}
	n := binary.BigEndian.Uint32(b)
	b = b[4:]
	if uint64(n) > uint64(len(b)) {
		return Membership{}, nil, false, errors.New("quorum: snapshot membership truncated")
	}
	ms, err = DecodeMembership(b[:n])
	if err != nil {
		return Membership{}, nil, false, err
	}
	return ms, b[n:], true, nil
}
