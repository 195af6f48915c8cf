package quorum

// An observer behind the active controller's log start is told, in the
// Fetch answer, of the controller's newest snapshot (KIP-630). It pulls
// that checkpoint with FetchSnapshot in chunks, checks it whole (CRC,
// offset, epoch), restores its state from it and fetches the log after it.

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// snapshotChunkBytes is the most one FetchSnapshot asks for by default.
const snapshotChunkBytes = 1 << 20

// maxSnapshotBytes bounds a snapshot an observer accepts, so a bad size
// from the network cannot make it allocate without end.
const maxSnapshotBytes = 1 << 30

// errSnapshotChanged says the controller no longer has the snapshot being
// pulled (a newer one replaced it): the observer fetches again to learn the
// new id.
var errSnapshotChanged = errors.New("the controller's snapshot changed while it was pulled")

// loadSnapshot pulls snapshot id from controller target at addr and
// restores the state from it.
func (o *Observer) loadSnapshot(ctx context.Context, addr string, target int32, id SnapshotID) error {
	o.log.Info("metadata log compacted behind the observer's offset; pulling the controller's snapshot",
		"controller", target, "end_offset", id.EndOffset, "epoch", id.Epoch, "next_offset", o.nextOffset())
	var data []byte
	for size := int64(-1); size < 0 || int64(len(data)) < size; {
		chunk, total, err := o.fetchSnapshotChunk(ctx, addr, target, id, int64(len(data)))
		if err != nil {
			return err
		}
		if size >= 0 && total != size {
			return fmt.Errorf("snapshot %d-%d from controller %d changed size from %d to %d", id.EndOffset, id.Epoch, target, size, total)
		}
		if total <= 0 || total > maxSnapshotBytes || len(chunk) == 0 || int64(len(data)+len(chunk)) > total {
			return fmt.Errorf("snapshot %d-%d from controller %d: chunk of %d bytes at %d of %d", id.EndOffset, id.Epoch, target, len(chunk), len(data), total)
		}
		size = total
		data = append(data, chunk...)
	}
	snap, err := DecodeCheckpoint(data)
	if err != nil {
		return fmt.Errorf("snapshot %d-%d from controller %d: %w", id.EndOffset, id.Epoch, target, err)
	}
	md := snap.GetMetadata()
	if int64(md.GetIndex()) != id.EndOffset || int64(md.GetTerm()) != int64(id.Epoch) {
		return fmt.Errorf("snapshot %d-%d from controller %d holds %d-%d", id.EndOffset, id.Epoch, target, md.GetIndex(), md.GetTerm())
	}
	ms, state, dynamic, err := UnwrapSnapshotData(snap.GetData())
	if err != nil {
		return err
	}
	if dynamic {
		o.setMembership(ms)
	}
	if err := o.opts.Restore(id.EndOffset-1, id.Epoch, state); err != nil {
		return badEntryError{err: fmt.Errorf("snapshot %d-%d from controller %d: %w", id.EndOffset, id.Epoch, target, err)}
	}
	o.mu.Lock()
	o.next, o.nextEpoch = id.EndOffset, id.Epoch
	o.notifyLocked()
	o.mu.Unlock()
	return nil
}

// fetchSnapshotChunk asks for the bytes of snapshot id from position on and
// returns them with the snapshot's size.
func (o *Observer) fetchSnapshotChunk(ctx context.Context, addr string, target int32, id SnapshotID, position int64) ([]byte, int64, error) {
	req := kmsg.NewPtrFetchSnapshotRequest()
	req.ReplicaID = -1
	req.MaxBytes = o.opts.SnapshotChunk
	t := kmsg.NewFetchSnapshotRequestTopic()
	t.Topic = MetadataTopic
	p := kmsg.NewFetchSnapshotRequestTopicPartition()
	p.CurrentLeaderEpoch = -1
	p.SnapshotID.EndOffset, p.SnapshotID.Epoch = id.EndOffset, id.Epoch
	p.Position = position
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	fctx, cancel := context.WithTimeout(ctx, o.opts.FetchTimeout)
	defer cancel()
	resp, err := o.opts.Peers.Request(fctx, addr, req)
	if err != nil {
		o.setLeader(-1, 0)
		return nil, 0, fmt.Errorf("fetch snapshot from controller %d: %w", target, err)
	}
	fr, ok := resp.(*kmsg.FetchSnapshotResponse)
	if !ok {
		return nil, 0, fmt.Errorf("controller %d answered a snapshot fetch with %T", target, resp)
	}
	if fr.ErrorCode != 0 {
		return nil, 0, fmt.Errorf("fetch snapshot from controller %d: %w", target, kerr.ErrorForCode(fr.ErrorCode))
	}
	if len(fr.Topics) != 1 || len(fr.Topics[0].Partitions) != 1 {
		return nil, 0, fmt.Errorf("controller %d answered a snapshot fetch with %d topics", target, len(fr.Topics))
	}
	rp := fr.Topics[0].Partitions[0]
	switch rp.ErrorCode {
	case 0:
	case kerr.NotLeaderForPartition.Code:
		o.setLeader(rp.CurrentLeader.LeaderID, int64(rp.CurrentLeader.LeaderEpoch))
		return nil, 0, fmt.Errorf("controller %d is not the leader (leader %d)", target, rp.CurrentLeader.LeaderID)
	case kerr.SnapshotNotFound.Code:
		return nil, 0, errSnapshotChanged
	default:
		return nil, 0, fmt.Errorf("fetch snapshot from controller %d: %w", target, kerr.ErrorForCode(rp.ErrorCode))
	}
	if rp.Position != position || rp.SnapshotID.EndOffset != id.EndOffset || rp.SnapshotID.Epoch != id.Epoch {
		return nil, 0, fmt.Errorf("controller %d answered snapshot %d-%d at %d, asked %d-%d at %d",
			target, rp.SnapshotID.EndOffset, rp.SnapshotID.Epoch, rp.Position, id.EndOffset, id.Epoch, position)
	}
	return rp.Bytes, rp.Size, nil
}
