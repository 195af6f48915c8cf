package node

import (
	"context"
	"errors"
	"fmt"

	"github.com/sluice-io/sluice/internal/api"
	"github.com/sluice-io/sluice/internal/metadata"
)

// start runs the components in order: the console, then the metadata
// quorum (a voter: the raft transport and CONTROLLER listeners, the driver,
// leadership or the cluster's bootstrap, the controller's duties) or the
// observer (a dedicated broker: until caught up), then the broker role.
func (n *Node) start(ctx context.Context) error {
	if err := n.startConsole(ctx); err != nil {
		return err
	}
	if n.meta.observer != nil {
		if err := n.startObserver(ctx); err != nil {
			return err
		}
	} else if err := n.startVoter(ctx); err != nil {
		return err
	}
	if n.broker == nil {
		return nil
	}
	if err := n.startBrokerData(ctx); err != nil {
		return err
	}
	return n.startServing(ctx)
}

// startVoter starts the quorum, waits until the log is replayed and then,
// on a single node, for its leadership, and bootstraps a new cluster's log
// (or checks an existing log's cluster id).
func (n *Node) startVoter(ctx context.Context) error {
	if n.meta.raft != nil {
		n.meta.raft.Start(n.meta.driver)
		if err := n.ctrlServer.Start(); err != nil {
			return err
		}
	}
	n.meta.driver.Start()
	select {
	case <-n.meta.driver.Replayed():
	case <-n.meta.driver.Done():
		return fmt.Errorf("metadata quorum: %w", n.meta.driver.Err())
	case <-ctx.Done():
		return ctx.Err()
	}
	records, err := n.bootstrapRecords()
	if err != nil {
		return err
	}
	if n.meta.raft == nil {
		if err := n.ctrl.AwaitLeadership(ctx); err != nil {
			return err
		}
		if err := n.ctrl.Bootstrap(ctx, n.clusterID, records); err != nil {
			return err
		}
		// A single voter's CONTROLLER listener carries no raft: it opens
		// once the controller leads and the cluster is bootstrapped.
		if err := n.ctrlServer.Start(); err != nil {
			return err
		}
	} else if err := n.ctrl.AwaitBootstrap(ctx, n.clusterID, records); err != nil {
		return err
	}
	// Fencing runs before this broker registers: an active controller may
	// have to fence its own stale registration first.
	n.ctrl.Start()
	return n.startAutoBalancer()
}

// bootstrapRecords are a new cluster's first records: its id, the pinned
// release's finalized features and what `sluice storage format` added
// (--add-scram).
func (n *Node) bootstrapRecords() ([]metadata.Record, error) {
	var recs []metadata.Record
	for _, f := range api.PinnedRelease().Finalized {
		if f.Name == metadata.MetadataVersionFeature {
			recs = append(metadata.BootstrapRecords(n.clusterID, f.Level), recs...)
			continue
		}
		// Only what Sluice serves is finalized (share and streams groups
		// are not).
		if level := api.ServedFeatureLevel(f.Name, f.Level); level > 0 {
			recs = append(recs, &metadata.FeatureLevelRecord{Name: f.Name, Level: level})
		}
	}
	if len(recs) == 0 {
		return nil, errors.New("bootstrap: no metadata.version in the pinned release")
	}
	formatted, err := n.formattedBootstrapRecords()
	if err != nil {
		return nil, err
	}
	return append(recs, formatted...), nil
}

// startObserver starts a dedicated broker's observer and waits until it
// has caught up with the controllers once and its image names this
// cluster.
func (n *Node) startObserver(ctx context.Context) error {
	obs := n.meta.observer
	obs.Start()
	select {
	case <-obs.CaughtUp():
	case <-obs.Done():
		return fmt.Errorf("metadata observer: %w", obs.Err())
	case <-ctx.Done():
		return ctx.Err()
	}
	for {
		changed := obs.StatusChanged()
		if id := n.meta.loader.Image().ClusterID(); id != "" {
			if id != n.clusterID {
				return fmt.Errorf("the controllers' metadata log holds cluster id %s but meta.properties says %s", id, n.clusterID)
			}
			return nil
		}
		select {
		case <-changed:
		case <-obs.Done():
			return fmt.Errorf("metadata observer: %w", obs.Err())
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// startBrokerData deletes the logs of partitions the image no longer
// assigns here, starts publishing metadata to the broker (the whole image
// first) and waits until that image is applied, then starts the log
// manager's tasks and the cleaner: the broker's data side, before it
// registers.
func (n *Node) startBrokerData(ctx context.Context) error {
	im := n.meta.loader.Image()
	// Partitions deleted (or deleted and recreated) while the node was
	// down: their removal was committed but not carried out.
	if err := n.storage.logs.RemoveStrayLogs(im, n.cfg.NodeID()); err != nil {
		return err
	}
	// Transaction state partitions load as the images arrive: their marker
	// jobs go out at once.
	n.broker.txns.Start()
	n.broker.publisher.Start(n.meta.loader.Image)
	if err := n.broker.publisher.WaitFor(ctx, im.Offset()); err != nil {
		return err
	}
	n.storage.start()
	n.startHighWatermarkCheckpoints()
	return nil
}

// startServing registers the broker and opens its listeners. A single node
// registers first, so no client sees the broker without its partitions
// (with an ephemeral advertised port the listeners open first, since the
// registration needs the bound port). A broker of a cluster binds its
// listeners but accepts clients only once unfenced: the controller unfences
// a broker whose metadata has reached its own registration, so until then
// its image may be one from before its restart, naming it leader of
// partitions long led elsewhere, and Kafka too enables request processing
// only then.
func (n *Node) startServing(ctx context.Context) error {
	b := n.broker
	if n.cfg.SingleNode() {
		if advertisesEphemeralPort(n.cfg) {
			if err := b.server.Start(); err != nil {
				return err
			}
			return b.lifecycle.Register(ctx)
		}
		if err := b.lifecycle.Register(ctx); err != nil {
			return err
		}
		return b.server.Start()
	}
	if err := b.server.Bind(); err != nil {
		return err
	}
	if err := b.lifecycle.Register(ctx); err != nil {
		return err
	}
	b.lifecycle.Start()
	b.server.Serve()
	return nil
}
