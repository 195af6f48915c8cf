package node

// Directory assignment on the broker (KIP-858), as Kafka's broker does it
// with its directory ids and AssignmentsManager: the registration lists the
// ids of the online log dirs (each dir's meta.properties directory.id),
// every heartbeat names the offline ones, and after each heartbeat the
// replicas whose recorded dir differs from where their log is (a new
// replica, a move between dirs, a restart) are sent in one
// AssignReplicasToDirs. The comparison is level-triggered: a lost request
// is simply planned again after the next heartbeat.

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/broker"
	"github.com/sluice-io/sluice/internal/commitlog/metafile"
	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
)

// dirIDs reads the directory id of each log dir (cleaned path → id). A dir
// whose meta.properties cannot be read (a disk already failed) is left out,
// as Kafka's broker registers only the dirs it could load; nil when no dir
// has an id.
func (n *Node) dirIDs() map[string]kafka.UUID {
	out := map[string]kafka.UUID{}
	for _, d := range n.cfg.LogDirs() {
		mp, err := metafile.ReadMetaProperties(n.fsys, filepath.Join(d, metafile.MetaPropertiesFile))
		if err != nil || mp.DirectoryID.IsZero() {
			n.logger.Warn("log dir without a readable directory id: not registered with the controller (KIP-858)", "dir", d, "err", err)
			continue
		}
		out[filepath.Clean(d)] = mp.DirectoryID
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// wireDirAssignment sets the lifecycle's log dir hooks.
func (n *Node) wireDirAssignment(opts *broker.LifecycleOptions) {
	ids := n.dirIDs()
	if ids == nil {
		return
	}
	opts.LogDirs = func() (online, offline [][16]byte) {
		off := n.storage.mgr.OfflineDirs()
		for _, d := range n.cfg.LogDirs() {
			id, ok := ids[filepath.Clean(d)]
			if !ok {
				continue
			}
			if slices.ContainsFunc(off, func(o string) bool { return filepath.Clean(o) == filepath.Clean(d) }) {
				offline = append(offline, id)
			} else {
				online = append(online, id)
			}
		}
		return online, offline
	}
	opts.AssignDirs = func(ctx context.Context, epoch int64) {
		im := n.broker.publisher.Image()
		plan := planDirAssignments(im, n.cfg.NodeID(), func(tp kafka.TopicPartition) (kafka.UUID, bool) {
			d, ok := n.storage.mgr.DirOf(tp)
			id, known := ids[filepath.Clean(d)]
			return id, ok && known
		})
		if len(plan) == 0 {
			return
		}
		n.sendDirAssignments(ctx, epoch, plan)
	}
}

// dirAssignment is one replica to record in a dir.
type dirAssignment struct {
	topicID   kafka.UUID
	partition int32
}

// planDirAssignments returns, by dir id, this broker's replicas whose
// recorded dir is not where their log is; nothing while directory
// assignment is off.
func planDirAssignments(im *metadata.Image, brokerID int32, where func(kafka.TopicPartition) (kafka.UUID, bool)) map[kafka.UUID][]dirAssignment {
	if !im.DirectoryAssignment() {
		return nil
	}
	out := map[kafka.UUID][]dirAssignment{}
	for _, name := range im.TopicNames() {
		t, _ := im.Topic(name)
		for _, p := range t.PartitionIDs() {
			recorded, ok := t.Partitions[p].DirOf(brokerID)
			if !ok {
				continue
			}
			if actual, ok := where(kafka.TopicPartition{Topic: name, Partition: p}); ok && actual != recorded {
				out[actual] = append(out[actual], dirAssignment{t.ID, p})
			}
		}
	}
	return out
}

func (n *Node) sendDirAssignments(ctx context.Context, epoch int64, plan map[kafka.UUID][]dirAssignment) {
	req := kmsg.NewPtrAssignReplicasToDirsRequest()
	req.BrokerID, req.BrokerEpoch = n.cfg.NodeID(), epoch
	for dir, as := range plan {
		rd := kmsg.NewAssignReplicasToDirsRequestDirectory()
		rd.ID = dir
		for _, a := range as {
			rt := kmsg.NewAssignReplicasToDirsRequestDirectoryTopic()
			rt.TopicID = a.topicID
			rp := kmsg.NewAssignReplicasToDirsRequestDirectoryTopicPartition()
			rp.Partition = a.partition
			rt.Partitions = append(rt.Partitions, rp)
			rd.Topics = append(rd.Topics, rt)
		}
		req.Directories = append(req.Directories, rd)
	}
	ctx, cancel := context.WithTimeout(ctx, millis(int64(n.cfg.Int(config.ControllerQuorumRequestTimeoutMs))))
	defer cancel()
	resp, err := n.channel.AssignReplicasToDirs(ctx, req)
	if err == nil && resp.ErrorCode != 0 {
		err = kerr.ErrorForCode(resp.ErrorCode)
	}
	if err != nil {
		n.logger.Info("assigning replicas to log dirs failed; retrying after the next heartbeat", "err", err)
		return
	}
	n.logger.Info("replicas assigned to log dirs", "dirs", len(plan))
}

// FormatFeature is `sluice storage format --feature NAME=LEVEL` (Kafka's
// kafka-storage format --feature): the FeatureLevelRecord a new cluster
// starts with. Only Sluice's directory assignment feature is accepted:
// Kafka's features are finalized at the pinned release's levels anyway. A
// cluster formatted with it cannot be rolled back to a release that does
// not read the directory fields (docs/versions.md); one without it keeps
// directory assignment off, as every cluster bootstrapped by v0.1.0.
func FormatFeature(spec string) (metadata.Record, error) {
	name, v, ok := strings.Cut(spec, "=")
	level, err := strconv.ParseInt(strings.TrimSpace(v), 10, 16)
	if !ok || err != nil || level < 0 {
		return nil, fmt.Errorf("%q: expected NAME=LEVEL", spec)
	}
	name = strings.TrimSpace(name)
	if name != metadata.DirectoryAssignmentFeature || level > 1 {
		return nil, fmt.Errorf("unsupported feature %s=%d: the supported one is %s (levels 0-1)", name, level, metadata.DirectoryAssignmentFeature)
	}
	return &metadata.FeatureLevelRecord{Name: name, Level: int16(level)}, nil
}
