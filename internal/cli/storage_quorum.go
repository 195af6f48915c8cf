package cli

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/quorum"
)

// QuorumFormat is how `storage format` starts a dynamic quorum (KIP-853):
// --standalone, --initial-controllers or --no-initial-controllers.
type QuorumFormat struct {
	Standalone           bool
	InitialControllers   string
	NoInitialControllers bool
}

func (q QuorumFormat) dynamic() bool {
	return q.Standalone || q.InitialControllers != "" || q.NoInitialControllers
}

// FormatNode is what the quorum flags are checked against: the node's
// roles and quorum keys.
type FormatNode struct {
	NodeID        int32
	Controller    bool
	StaticVoters  bool   // controller.quorum.voters is set
	ListenerName  string // the first of controller.listener.names
	Advertised    []quorum.Endpoint
	MetadataDirID kafka.UUID // drawn for the metadata log dir
}

// BootstrapVoters checks the flags as Kafka's StorageTool and Formatter do
// and returns what to write into the metadata log partition directory
// (nil: nothing, a static quorum or a broker), and the directory id the
// metadata log dir must get (--initial-controllers names it).
func (q QuorumFormat) BootstrapVoters(n FormatNode) (*quorum.BootstrapVoters, kafka.UUID, error) {
	count := 0
	for _, set := range []bool{q.Standalone, q.InitialControllers != "", q.NoInitialControllers} {
		if set {
			count++
		}
	}
	switch {
	case count > 1:
		return nil, n.MetadataDirID, errors.New("only one of --standalone, --initial-controllers, and --no-initial-controllers can be specified")
	case !n.Controller && count > 0:
		return nil, n.MetadataDirID, errors.New("--standalone, --initial-controllers, and --no-initial-controllers can only be used on a controller")
	case !n.Controller:
		return nil, n.MetadataDirID, nil
	case n.StaticVoters && count > 0:
		return nil, n.MetadataDirID, errors.New("You cannot specify --standalone, --initial-controllers, or --no-initial-controllers when controller.quorum.voters is set")
	case n.StaticVoters:
		return nil, n.MetadataDirID, nil
	case count == 0:
		return nil, n.MetadataDirID, errors.New("Because controller.quorum.voters is not set on this controller, you must specify one of the following: --standalone, --initial-controllers, or --no-initial-controllers.")
	}
	b := &quorum.BootstrapVoters{KRaftVersion: 1}
	switch {
	case q.Standalone:
		b.Voters = []quorum.Member{{ID: n.NodeID, DirectoryID: n.MetadataDirID, Endpoints: n.Advertised}}
	case q.InitialControllers != "":
		voters, err := ParseInitialControllers(q.InitialControllers, n.ListenerName)
		if err != nil {
			return nil, n.MetadataDirID, err
		}
		b.Voters = voters
		for _, v := range voters {
			if v.ID == n.NodeID {
				return b, v.DirectoryID, nil
			}
		}
	}
	return b, n.MetadataDirID, nil
}

// ParseInitialControllers reads --initial-controllers as Kafka's
// DynamicVoters does: id@host:port:directoryid, comma separated, with an
// IPv6 host in brackets.
func ParseInitialControllers(s, listener string) ([]quorum.Member, error) {
	var out []quorum.Member
	seen := map[int32]bool{}
	dirs := map[kafka.UUID]bool{}
	for _, part := range strings.Split(s, ",") {
		m, err := parseDynamicVoter(strings.TrimSpace(part), listener)
		if err != nil {
			return nil, err
		}
		if seen[m.ID] {
			return nil, fmt.Errorf("Node id %d was specified more than once.", m.ID)
		}
		if dirs[m.DirectoryID] {
			return nil, fmt.Errorf("Directory id %s was specified more than once.", m.DirectoryID)
		}
		seen[m.ID], dirs[m.DirectoryID] = true, true
		out = append(out, m)
	}
	if len(out) == 0 {
		return nil, errors.New("No voters given.")
	}
	return out, nil
}

func parseDynamicVoter(s, listener string) (quorum.Member, error) {
	idText, rest, ok := strings.Cut(s, "@")
	if !ok {
		return quorum.Member{}, errors.New("No @ found in dynamic voter string.")
	}
	id, err := strconv.ParseInt(idText, 10, 32)
	if err != nil || id < 0 {
		return quorum.Member{}, fmt.Errorf("Failed to parse node id in dynamic voter string: %s", idText)
	}
	i := strings.LastIndex(rest, ":")
	if i < 0 {
		return quorum.Member{}, errors.New("No directory id found in dynamic voter string.")
	}
	addr, dirText := rest[:i], rest[i+1:]
	host, portText, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return quorum.Member{}, fmt.Errorf("Failed to parse host and port in dynamic voter string: %s", addr)
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return quorum.Member{}, fmt.Errorf("Failed to parse port in dynamic voter string: %s", portText)
	}
	dir, err := kafka.ParseUUID(dirText)
	if err != nil || dir.IsZero() {
		return quorum.Member{}, fmt.Errorf("Failed to parse directory ID in dynamic voter string: %s", dirText)
	}
	return quorum.Member{ID: int32(id), DirectoryID: dir, Endpoints: []quorum.Endpoint{{Name: listener, Host: host, Port: int32(port)}}}, nil
}
