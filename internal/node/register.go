package node

import (
	"context"
	"fmt"
	"net"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/internal/api"
	"sluice/internal/kafka"
	"sluice/internal/metadata"
)

// registerBroker registers this process as the broker of its node id and
// unfences it. A registration of an earlier process of this node that is
// still unfenced is fenced first: this node is the only voter and holds the
// log dir locks, so no other process can be that broker (Kafka waits for the
// old registration's session to time out instead).
func (n *Node) registerBroker(ctx context.Context) error {
	id := n.cfg.NodeID()
	err := n.control.submit(ctx, func(im *metadata.Image) ([]metadata.Record, error) {
		old, ok := im.Broker(id)
		if !ok || old.Fenced {
			return nil, nil
		}
		return []metadata.Record{&metadata.FenceBrokerRecord{BrokerID: id, BrokerEpoch: old.Epoch}}, nil
	})
	if err != nil {
		return fmt.Errorf("fence the previous registration of broker %d: %w", id, err)
	}
	req, err := n.registrationRequest()
	if err != nil {
		return err
	}
	var resp *kmsg.BrokerRegistrationResponse
	err = n.control.submit(ctx, func(im *metadata.Image) ([]metadata.Record, error) {
		var recs []metadata.Record
		recs, resp = n.ctrl.RegisterBroker(im, req)
		return recs, nil
	})
	if err != nil {
		return fmt.Errorf("register broker %d: %w", id, err)
	}
	if resp.ErrorCode != 0 {
		return fmt.Errorf("register broker %d: %w", id, kerr.ErrorForCode(resp.ErrorCode))
	}
	err = n.control.submit(ctx, func(im *metadata.Image) ([]metadata.Record, error) {
		return n.ctrl.UnfenceBroker(im, id, resp.BrokerEpoch)
	})
	if err != nil {
		return fmt.Errorf("unfence broker %d: %w", id, err)
	}
	return nil
}

// registrationRequest is this process's BrokerRegistration: a fresh
// incarnation id, the advertised broker listeners (an ephemeral port as
// bound) and broker.rack.
func (n *Node) registrationRequest() (*kmsg.BrokerRegistrationRequest, error) {
	incarnation, err := kafka.RandomUUID()
	if err != nil {
		return nil, fmt.Errorf("draw an incarnation id: %w", err)
	}
	req := kmsg.NewPtrBrokerRegistrationRequest()
	req.BrokerID, req.ClusterID, req.IncarnationID = n.cfg.NodeID(), n.clusterID, incarnation
	if rack := n.cfg.String("broker.rack"); rack != "" {
		req.Rack = &rack
	}
	for _, l := range n.cfg.AdvertisedListeners() {
		if isControllerListener(n.cfg, l.Name) {
			continue
		}
		host, port := l.Host, l.Port
		if host == "" {
			host = hostName()
		}
		if port == 0 {
			// An ephemeral listener port is advertised as bound.
			if addr, ok := n.server.Addr(l.Name).(*net.TCPAddr); ok {
				port = addr.Port
			}
		}
		rl := kmsg.NewBrokerRegistrationRequestListener()
		rl.Name, rl.Host, rl.Port, rl.SecurityProtocol = l.Name, host, uint16(port), securityProtocolID(l.Protocol)
		req.Listeners = append(req.Listeners, rl)
	}
	return req, nil
}

// LogDirs implements api.ControlPlane.
func (n *Node) LogDirs() []api.LogDirDescription { return n.logs.describe() }
