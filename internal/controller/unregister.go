package controller

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/metadata"
)

// UnregisterBroker computes the records and response of an
// UnregisterBroker request (key 64), as Kafka's ReplicationControlManager:
// an unknown id is BROKER_ID_NOT_REGISTERED ("Broker ID N is not currently
// registered"); otherwise the broker leaves every ISR it is in (not one
// where it is the last member) and every leadership it holds, then an
// UnregisterBrokerRecord removes its registration. Kafka does this whether
// or not the broker is still running; its replica assignments are left as
// they are (decommission moves them first).
func (c *Controller) UnregisterBroker(im *metadata.Image, req *kmsg.UnregisterBrokerRequest) ([]metadata.Record, *kmsg.UnregisterBrokerResponse) {
	resp := kmsg.NewPtrUnregisterBrokerResponse()
	resp.Version = req.Version
	b, ok := im.Broker(req.BrokerID)
	if !ok {
		msg := fmt.Sprintf("Broker ID %d is not currently registered", req.BrokerID)
		resp.ErrorCode, resp.ErrorMessage = kerr.BrokerIDNotRegistered.Code, &msg
		return nil, resp
	}
	var recs []metadata.Record
	// FenceBroker's partition changes are Kafka's handleBrokerUnregistered
	// (leave ISRs and leaderships); its FenceBrokerRecord is not needed,
	// the registration goes away.
	for _, r := range FenceBroker(im, req.BrokerID) {
		if _, fence := r.(*metadata.FenceBrokerRecord); !fence {
			recs = append(recs, r)
		}
	}
	return append(recs, &metadata.UnregisterBrokerRecord{BrokerID: req.BrokerID, BrokerEpoch: b.Epoch}), resp
}
