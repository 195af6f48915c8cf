package controller

import (
	"fmt"
	"math"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/metadata"
)

// RegisterBroker computes the records and response of a BrokerRegistration.
// A broker registers fenced; it is unfenced once it has caught up with the
// metadata log (heartbeats, issue 8). Its new epoch is one past the image's
// offset: a registration always commits a new entry, so epochs only grow.
// A live registration of another incarnation is refused
// (DUPLICATE_BROKER_REGISTRATION) unless the request's PreviousBrokerEpoch
// names its epoch (KIP-966: a clean stop recorded it).
func (c *Controller) RegisterBroker(im *metadata.Image, req *kmsg.BrokerRegistrationRequest) ([]metadata.Record, *kmsg.BrokerRegistrationResponse) {
	resp := kmsg.NewPtrBrokerRegistrationResponse()
	resp.Version = req.Version
	resp.BrokerEpoch = -1
	if req.ClusterID != im.ClusterID() {
		resp.ErrorCode = kerr.InconsistentClusterID.Code
		return nil, resp
	}
	if req.BrokerID < 0 {
		resp.ErrorCode = kerr.InvalidRequest.Code
		return nil, resp
	}
	var recs []metadata.Record
	if old, ok := im.Broker(req.BrokerID); ok && old.IncarnationID != req.IncarnationID && !old.Fenced {
		if req.PreviousBrokerEpoch != old.Epoch {
			// Another live process holds this id, or this process's
			// previous incarnation stopped without recording its epoch:
			// its session has to expire first.
			resp.ErrorCode = kerr.DuplicateBrokerRegistration.Code
			return nil, resp
		}
		// KIP-966: the previous incarnation stopped cleanly at this epoch
		// (it recorded it), so the id is free now. Its registration is
		// fenced first, moving its leaderships and ISR places, as a
		// session expiry would have done.
		recs = FenceBroker(im, req.BrokerID)
	}
	logDirs, err := registrationLogDirs(im, req)
	if err != nil {
		resp.ErrorCode = kerr.InvalidRegistration.Code
		return nil, resp
	}
	epoch := im.Offset() + 1
	if old, ok := im.Broker(req.BrokerID); ok && old.Epoch >= epoch {
		epoch = old.Epoch + 1
	}
	rec := &metadata.RegisterBrokerRecord{
		BrokerID:      req.BrokerID,
		IncarnationID: req.IncarnationID,
		BrokerEpoch:   epoch,
		Rack:          req.Rack,
		Fenced:        true,
		LogDirs:       logDirs,
	}
	for _, l := range req.Listeners {
		rec.Endpoints = append(rec.Endpoints, metadata.Endpoint{Name: l.Name, Host: l.Host, Port: int32(l.Port), SecurityProtocol: l.SecurityProtocol})
	}
	resp.BrokerEpoch = epoch
	return append(recs, rec), resp
}

// AllocateProducerIDs hands a registered broker the next block of producer ids.
func (c *Controller) AllocateProducerIDs(im *metadata.Image, req *kmsg.AllocateProducerIDsRequest) ([]metadata.Record, *kmsg.AllocateProducerIDsResponse) {
	resp := kmsg.NewPtrAllocateProducerIDsResponse()
	resp.Version = req.Version
	b, ok := im.Broker(req.BrokerID)
	if !ok {
		resp.ErrorCode = kerr.BrokerIDNotRegistered.Code
		return nil, resp
	}
	if b.Epoch != req.BrokerEpoch {
		resp.ErrorCode = kerr.StaleBrokerEpoch.Code
		return nil, resp
	}
	start := im.NextProducerID()
	if start > math.MaxInt64-ProducerIDBlockSize {
		resp.ErrorCode = kerr.UnknownServerError.Code
		return nil, resp
	}
	resp.ProducerIDStart, resp.ProducerIDLen = start, ProducerIDBlockSize
	return []metadata.Record{&metadata.ProducerIDsRecord{
		BrokerID: req.BrokerID, BrokerEpoch: req.BrokerEpoch, NextProducerID: start + ProducerIDBlockSize,
	}}, resp
}

// UnfenceBroker returns the record that unfences a registered broker at its
// current epoch, or an error when the broker or epoch does not match.
func (c *Controller) UnfenceBroker(im *metadata.Image, id int32, epoch int64) ([]metadata.Record, error) {
	b, ok := im.Broker(id)
	if !ok {
		return nil, fmt.Errorf("controller: unfence broker %d: %w", id, kerr.BrokerIDNotRegistered)
	}
	if b.Epoch != epoch {
		return nil, fmt.Errorf("controller: unfence broker %d epoch %d (current %d): %w", id, epoch, b.Epoch, kerr.StaleBrokerEpoch)
	}
	if !b.Fenced {
		return nil, nil
	}
	return []metadata.Record{&metadata.UnfenceBrokerRecord{BrokerID: id, BrokerEpoch: epoch}}, nil
}
