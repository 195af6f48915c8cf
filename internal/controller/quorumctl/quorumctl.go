// Package quorumctl is the controller side of a voter, Kafka's
// QuorumController: controller operations (internal/controller, pure) run
// one at a time on a controller.Runner over the metadata quorum
// (apply-on-commit), the brokers' sessions are kept in memory, and the
// active controller's periodic duties (fencing brokers whose sessions
// expired, moving leadership back to preferred replicas) run on a goroutine
// this package owns. Every voter builds one; only the active controller's
// operations commit, the others answer NOT_CONTROLLER.
package quorumctl

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/controller"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/quorum"
)

// Quorum is the voter's raft driver as the controller uses it.
type Quorum interface {
	controller.Proposer
	Status() quorum.Status
	StatusChanged() <-chan struct{}
	Done() <-chan struct{}
	Err() error
}

// Options configure a QuorumController.
type Options struct {
	NodeID int32
	// Logic computes the operations.
	Logic *controller.Controller
	// Quorum runs this voter's raft.
	Quorum Quorum
	// Image is the applied metadata image (the Loader's): operations are
	// computed on it.
	Image func() *metadata.Image
	// Published, when set, waits until this node's broker side has been
	// given the image at an offset: an admin operation answers only then,
	// so a client told a topic exists finds it in this broker's next
	// answer. Nil on a dedicated controller.
	Published func(ctx context.Context, offset int64) error
	// Voters and Listener describe the quorum for DescribeQuorum and
	// KIP-919 DescribeCluster (controller.quorum.voters and the first of
	// controller.listener.names).
	Voters   []quorum.VoterEndpoint
	Listener string
	// ClusterID is meta.properties' cluster id: voter changes for another
	// cluster are refused (INCONSISTENT_CLUSTER_ID).
	ClusterID string
	// Duties turns on the periodic duties (a quorum of several voters);
	// a single node fences nobody.
	Duties bool
	// SessionTimeout is broker.session.timeout.ms.
	SessionTimeout time.Duration
	// FenceCheckInterval is how often expired sessions are looked for
	// (0: 250 ms).
	FenceCheckInterval time.Duration
	// AutoLeaderRebalance and RebalanceInterval are
	// auto.leader.rebalance.enable and
	// leader.imbalance.check.interval.seconds.
	AutoLeaderRebalance bool
	RebalanceInterval   time.Duration
	Clock               clock.Clock
	Logger              *slog.Logger
}

// QuorumController runs controller operations and duties on a voter.
type QuorumController struct {
	opts     Options
	runner   *controller.Runner
	sessions *controller.Sessions
	log      *slog.Logger

	stopc chan struct{}
	donec chan struct{} // nil until Start
}

// New builds the controller; Start runs its duties.
func New(opts Options) *QuorumController {
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.FenceCheckInterval <= 0 {
		opts.FenceCheckInterval = 250 * time.Millisecond
	}
	return &QuorumController{
		opts:     opts,
		runner:   controller.NewRunner(opts.Image, opts.Quorum),
		sessions: controller.NewSessions(opts.SessionTimeout),
		log:      opts.Logger.With("component", "controller"),
		stopc:    make(chan struct{}),
	}
}

// Start starts the duties goroutine when Options.Duties asks for it.
func (c *QuorumController) Start() {
	if !c.opts.Duties || c.donec != nil {
		return
	}
	c.donec = make(chan struct{})
	go func() {
		defer close(c.donec)
		c.runDuties()
	}()
}

// Stop ends the duties and makes later operations fail (the one in flight
// is cancelled).
func (c *QuorumController) Stop() {
	select {
	case <-c.stopc:
	default:
		close(c.stopc)
	}
	if c.donec != nil {
		<-c.donec
	}
	c.runner.Stop()
}

// Active reports whether this voter leads the quorum: the active
// controller.
func (c *QuorumController) Active() bool { return c.opts.Quorum.Status().IsLeader }

// notActive is the error of a controller-only request on a voter that does
// not lead.
func (c *QuorumController) notActive() error {
	if c.Active() {
		return nil
	}
	return controller.ErrNotController
}

// runOp runs op on the runner and, for admin operations, waits until the
// broker side of this node has the result.
func runOp[R any](ctx context.Context, c *QuorumController, publish bool, op func(*metadata.Image) ([]metadata.Record, R)) (R, error) {
	resp, offset, err := controller.Run(ctx, c.runner, op)
	if err != nil || !publish || c.opts.Published == nil {
		return resp, err
	}
	if err := c.opts.Published(ctx, offset); err != nil {
		var zero R
		return zero, err
	}
	return resp, nil
}

// errAlreadyBootstrapped is what Bootstrap's operation returns when the log
// already names a cluster: nothing is proposed.
var errAlreadyBootstrapped = errors.New("metadata log already bootstrapped")
