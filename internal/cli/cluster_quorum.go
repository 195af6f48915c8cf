package cli

// sluice cluster quorum and sluice cluster brokers: the metadata quorum
// (DescribeQuorum, which any broker forwards to the active controller, or,
// with --bootstrap-controller, asked of the controllers directly as KIP-919
// does) and the registered brokers with their fenced state (DescribeCluster
// v2).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// quorumView is what DescribeQuorum says of __cluster_metadata-0.
type quorumView struct {
	leader, epoch int32
	hw            int64
	// offsets are the log end offsets of voters and observers (-1 unknown).
	voters, observers map[int32]int64
	voterOrder        []int32
}

func describeQuorum(ctx context.Context, cl *kgo.Client) (*quorumView, error) {
	req := newDescribeQuorumRequest()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("describe quorum: %w", describe(err))
	}
	return quorumViewOf(resp)
}

func newDescribeQuorumRequest() *kmsg.DescribeQuorumRequest {
	req := kmsg.NewPtrDescribeQuorumRequest()
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = "__cluster_metadata"
	rt.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
	req.Topics = append(req.Topics, rt)
	return req
}

// quorumViewOf reads a DescribeQuorum answer; an error of the metadata
// partition (NOT_LEADER_OR_FOLLOWER from a controller that is not the
// leader) is returned as its kerr error.
func quorumViewOf(resp *kmsg.DescribeQuorumResponse) (*quorumView, error) {
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, fmt.Errorf("describe quorum: %w", describe(err))
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return nil, errors.New("describe quorum: the answer holds no metadata partition")
	}
	p := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
		return nil, fmt.Errorf("describe quorum: %w", describe(err))
	}
	v := &quorumView{leader: p.LeaderID, epoch: p.LeaderEpoch, hw: p.HighWatermark, voters: map[int32]int64{}, observers: map[int32]int64{}}
	for _, r := range p.CurrentVoters {
		v.voters[r.ReplicaID] = r.LogEndOffset
		v.voterOrder = append(v.voterOrder, r.ReplicaID)
	}
	for _, r := range p.Observers {
		v.observers[r.ReplicaID] = r.LogEndOffset
	}
	return v, nil
}

// lag is the high watermark minus a log end offset, or "-" when unknown.
func (v *quorumView) lag(leo int64) string {
	if leo < 0 {
		return "-"
	}
	return fmt.Sprint(max(v.hw-leo, 0))
}

func newClusterQuorumCommand(conn *connection) *cobra.Command {
	var bootstrapController string
	cmd := &cobra.Command{
		Use:   "quorum",
		Short: "Show the metadata quorum: leader, epoch, high watermark, voters and observers with their lag",
		Example: `  sluice cluster quorum --brokers 127.0.0.1:9092
  sluice cluster quorum --bootstrap-controller 127.0.0.1:9093`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if bootstrapController != "" {
				base := cmd.Context()
				if base == nil {
					base = context.Background()
				}
				ctx, cancel := conn.requestContext(base)
				defer cancel()
				security, err := conn.securityOpts()
				if err != nil {
					return err
				}
				v, err := describeQuorumViaController(ctx, conn.timeout, bootstrapController, security...)
				if err != nil {
					return err
				}
				return printQuorum(cmd.OutOrStdout(), v)
			}
			ctx, cl, done, err := openClient(cmd, conn)
			if err != nil {
				return err
			}
			defer done()
			v, err := describeQuorum(ctx, cl)
			if err != nil {
				return err
			}
			return printQuorum(cmd.OutOrStdout(), v)
		},
	}
	cmd.Flags().StringVar(&bootstrapController, "bootstrap-controller", "",
		"a controller's CONTROLLER listener (host:port): ask the controllers directly (KIP-919) instead of the brokers")
	return cmd
}

// describeQuorumViaController asks the controller at addr which controller
// is active (DescribeCluster, controller endpoints) and asks that one for
// the quorum, again while a leader change makes it answer
// NOT_LEADER_OR_FOLLOWER, until ctx ends.
func describeQuorumViaController(ctx context.Context, timeout time.Duration, addr string, security ...kgo.Opt) (*quorumView, error) {
	var last error
	for {
		v, err := describeQuorumOnce(ctx, timeout, addr, security)
		if err == nil {
			return v, nil
		}
		if !retriableQuorumError(err) {
			return nil, err
		}
		last = err
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("describe quorum through controller %s: %w", addr, describe(last))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// errNoActiveController says the controllers name no leader yet.
var errNoActiveController = errors.New("the controllers name no active controller")

func retriableQuorumError(err error) bool {
	var ke *kerr.Error
	return errors.Is(err, errNoActiveController) || (errors.As(err, &ke) && ke.Retriable)
}

func describeQuorumOnce(ctx context.Context, timeout time.Duration, addr string, security []kgo.Opt) (*quorumView, error) {
	dreq := kmsg.NewPtrDescribeClusterRequest()
	dreq.EndpointType = 2 // controllers (KIP-919)
	resp, err := requestOne(ctx, timeout, addr, dreq, security)
	if err != nil {
		return nil, err
	}
	dc := resp.(*kmsg.DescribeClusterResponse)
	if err := kerr.ErrorForCode(dc.ErrorCode); err != nil {
		return nil, fmt.Errorf("describe controllers at %s: %w", addr, err)
	}
	i := slices.IndexFunc(dc.Brokers, func(b kmsg.DescribeClusterResponseBroker) bool { return b.NodeID == dc.ControllerID })
	if i < 0 {
		return nil, errNoActiveController
	}
	active := net.JoinHostPort(dc.Brokers[i].Host, strconv.Itoa(int(dc.Brokers[i].Port)))
	resp, err = requestOne(ctx, timeout, active, newDescribeQuorumRequest(), security)
	if err != nil {
		return nil, err
	}
	return quorumViewOf(resp.(*kmsg.DescribeQuorumResponse))
}

// requestOne sends req to the node at addr itself (not to whichever node a
// client's metadata would pick), with --command-config's security options.
func requestOne(ctx context.Context, timeout time.Duration, addr string, req kmsg.Request, security []kgo.Opt) (kmsg.Response, error) {
	opts := []kgo.Opt{kgo.SeedBrokers(addr), kgo.ClientID("sluice-cli"), softwareNameAndVersion(),
		kgo.DialTimeout(min(timeout, 10*time.Second))}
	cl, err := kgo.NewClient(append(opts, security...)...)
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", addr, err)
	}
	defer cl.Close()
	resp, err := cl.SeedBrokers()[0].Request(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("%s to %s: %w", kmsg.NameForKey(req.Key()), addr, err)
	}
	return resp, nil
}

func printQuorum(out io.Writer, v *quorumView) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "LEADER\t%d\n", v.leader)
	fmt.Fprintf(tw, "EPOCH\t%d\n", v.epoch)
	fmt.Fprintf(tw, "HIGH WATERMARK\t%d\n", v.hw)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out)
	tw = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tROLE\tLOG END OFFSET\tLAG")
	for _, id := range v.voterOrder {
		role := "voter"
		if id == v.leader {
			role = "leader"
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\n", id, role, v.voters[id], v.lag(v.voters[id]))
	}
	for _, id := range sortedIDs(v.observers) {
		fmt.Fprintf(tw, "%d\tobserver\t%d\t%s\n", id, v.observers[id], v.lag(v.observers[id]))
	}
	return tw.Flush()
}

func newClusterBrokersCommand(conn *connection) *cobra.Command {
	return &cobra.Command{
		Use:     "brokers",
		Short:   "List the registered brokers, fenced or not, with their metadata lag",
		Example: `  sluice cluster brokers --brokers 127.0.0.1:9092`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cl, done, err := openClient(cmd, conn)
			if err != nil {
				return err
			}
			defer done()
			req := kmsg.NewPtrDescribeClusterRequest()
			req.IncludeFencedBrokers = true
			resp, err := req.RequestWith(ctx, cl)
			if err != nil {
				return fmt.Errorf("describe cluster: %w", describe(err))
			}
			if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
				return fmt.Errorf("describe cluster: %w", describe(err))
			}
			q, qerr := describeQuorum(ctx, cl)
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "BROKER\tHOST\tPORT\tRACK\tFENCED\tMETADATA LAG")
			for _, b := range resp.Brokers {
				rack := "-"
				if b.Rack != nil {
					rack = *b.Rack
				}
				lag := "-"
				if qerr == nil {
					if leo, ok := q.observers[b.NodeID]; ok {
						lag = q.lag(leo)
					} else if leo, ok := q.voters[b.NodeID]; ok {
						lag = q.lag(leo)
					}
				}
				fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%t\t%s\n", b.NodeID, b.Host, b.Port, rack, b.IsFenced, lag)
			}
			return tw.Flush()
		},
	}
}

// openClient connects a client, checks the cluster answers and returns a
// context bounded by the timeout; done releases both.
func openClient(cmd *cobra.Command, conn *connection) (context.Context, *kgo.Client, func(), error) {
	base := cmd.Context()
	if base == nil {
		base = context.Background()
	}
	cl, err := conn.client(cmd)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := conn.ping(base, cmd, cl); err != nil {
		cl.Close()
		return nil, nil, nil, err
	}
	ctx, cancel := conn.requestContext(base)
	return ctx, cl, func() { cancel(); cl.Close() }, nil
}

func sortedIDs(m map[int32]int64) []int32 { return slices.Sorted(maps.Keys(m)) }
