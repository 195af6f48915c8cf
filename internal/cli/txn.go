package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The API keys the txn commands send, checked against ApiVersions first so
// a broker without them fails with its name rather than kgo's "too old".
const (
	keyWriteTxnMarkers      int16 = 27
	keyDescribeProducers    int16 = 61
	keyDescribeTransactions int16 = 65
	keyListTransactions     int16 = 66
)

func newTxnCommand() *cobra.Command {
	conn := &connection{}
	cmd := &cobra.Command{
		Use:     "txn",
		Aliases: []string{"transactions"},
		Short:   "List and describe transactions and producers, find and abort hanging transactions",
		Long: "Inspect the transactional state of producers, as Kafka's kafka-transactions tool does: " +
			"the transactions the coordinators know (list, describe), the producers each partition " +
			"knows (describe-producers), transactions open on a partition that no coordinator will " +
			"finish (find-hanging), and aborting one of those (abort).",
		Example: `  sluice txn list --state Ongoing
  sluice txn describe payments-tx
  sluice txn describe-producers orders -p 0
  sluice txn find-hanging --topic orders
  sluice txn abort --topic orders --partition 0 --start-offset 1234`,
	}
	addConnectionFlags(cmd, conn)
	cmd.AddCommand(
		newTxnListCommand(conn),
		newTxnDescribeCommand(conn),
		newTxnDescribeProducersCommand(conn),
		newTxnFindHangingCommand(conn),
		newTxnAbortCommand(conn),
	)
	return cmd
}

// txnSession is what a txn command works with: the kgo client (for the
// requests kadm does not cover), the admin client over it and a context
// bounded by --timeout.
type txnSession struct {
	ctx  context.Context
	cl   *kgo.Client
	adm  *kadm.Client
	done func()
}

// openTxnSession connects, and checks that every broker advertises the
// given API keys.
func openTxnSession(cmd *cobra.Command, conn *connection, keys ...int16) (*txnSession, error) {
	base := cmd.Context()
	if base == nil {
		base = context.Background()
	}
	cl, err := conn.client(cmd)
	if err != nil {
		return nil, err
	}
	if err := conn.ping(base, cmd, cl); err != nil {
		cl.Close()
		return nil, err
	}
	ctx, cancel := conn.requestContext(base)
	s := &txnSession{ctx: ctx, cl: cl, adm: kadm.NewClient(cl), done: func() { cancel(); cl.Close() }}
	if err := requireAPIs(ctx, s.adm, keys...); err != nil {
		s.done()
		return nil, err
	}
	return s, nil
}

// requireAPIs fails with UNSUPPORTED_VERSION naming the request when some
// broker does not advertise one of the keys. A broker that does not answer
// is passed over (a cluster with a broker down is when hanging transactions
// are looked for), unless none answers.
func requireAPIs(ctx context.Context, adm *kadm.Client, keys ...int16) error {
	versions, err := adm.ApiVersions(ctx)
	if err != nil {
		return fmt.Errorf("api versions: %w", describe(err))
	}
	var unanswered error
	answered := 0
	for _, v := range versions.Sorted() {
		if v.Err != nil {
			unanswered = fmt.Errorf("api versions of broker %d: %w", v.NodeID, describe(v.Err))
			continue
		}
		answered++
		if err := missingAPI(v.NodeID, func(key int16) bool {
			_, ok := v.KeyMaxVersion(key)
			return ok
		}, keys); err != nil {
			return err
		}
	}
	if answered == 0 {
		return unanswered
	}
	return nil
}

// missingAPI names the first of keys a broker does not advertise.
func missingAPI(broker int32, advertised func(key int16) bool, keys []int16) error {
	for _, key := range keys {
		if !advertised(key) {
			return fmt.Errorf("broker %d does not serve %s (API key %d is not advertised): %w",
				broker, kmsg.NameForKey(key), key, describe(kerr.UnsupportedVersion))
		}
	}
	return nil
}

// printTable writes Kafka's headings and the rows as aligned columns,
// without the padding an empty last cell would leave.
func printTable(out io.Writer, headers []string, rows [][]string) error {
	var buf strings.Builder
	tw := tabwriter.NewWriter(&buf, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(headers, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, line := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
		if _, err := fmt.Fprintln(out, strings.TrimRight(line, " ")); err != nil {
			return err
		}
	}
	return nil
}

// printJSON writes v as one JSON document and a newline.
func printJSON(out io.Writer, v any) error {
	if err := json.NewEncoder(out).Encode(v); err != nil {
		return fmt.Errorf("output as JSON: %w", err)
	}
	return nil
}

// txnListing is one row of `txn list`, also its --json shape.
type txnListing struct {
	TransactionalID string `json:"transactional_id"`
	Coordinator     int32  `json:"coordinator"`
	ProducerID      int64  `json:"producer_id"`
	State           string `json:"state"`
}

// listFilter is what ListTransactions filters on; the zero durationMs is a
// real filter, -1 is none (Kafka's default).
type listFilter struct {
	states      []string
	producerIDs []int64
	durationMs  int64
	pattern     string
}

// listResult is every coordinator's answer, sorted by transactional id,
// with the state names some coordinator did not know.
type listResult struct {
	listings      []txnListing
	unknownStates []string
}

func newTxnListCommand(conn *connection) *cobra.Command {
	f := listFilter{durationMs: -1}
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the transactional ids every coordinator knows, with producer id and state",
		Example: `  sluice txn list
  sluice txn list --state Ongoing --state PrepareCommit
  sluice txn list --state Ongoing --duration-ms 60000   # open for more than a minute
  sluice txn list --producer-id 4001 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := openTxnSession(cmd, conn, keyListTransactions)
			if err != nil {
				return err
			}
			defer s.done()
			res, err := listTransactions(s.ctx, s.cl, f)
			if err != nil {
				return fmt.Errorf("list transactions: %w", err)
			}
			if len(res.unknownStates) > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "note: the coordinators do not know the state(s) %s; no transaction is in them\n",
					strings.Join(res.unknownStates, ", "))
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), res.listings)
			}
			rows := make([][]string, 0, len(res.listings))
			for _, l := range res.listings {
				rows = append(rows, []string{l.TransactionalID, fmt.Sprint(l.Coordinator), fmt.Sprint(l.ProducerID), l.State})
			}
			return printTable(cmd.OutOrStdout(), []string{"TransactionalId", "Coordinator", "ProducerId", "TransactionState"}, rows)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.states, "state", nil, "only transactions in this state (Empty, Ongoing, PrepareCommit, PrepareAbort, "+
		"CompleteCommit, CompleteAbort, PrepareEpochFence; repeatable)")
	fl.Int64SliceVar(&f.producerIDs, "producer-id", nil, "only transactions of this producer id (repeatable, or comma-separated)")
	hideEmptyDefault(cmd, "producer-id")
	fl.Int64Var(&f.durationMs, "duration-ms", -1, "only transactions whose current (or last) transaction started more than this many ms ago (-1: all)")
	fl.Int64Var(&f.durationMs, "duration-filter", -1, "kafka-transactions' name for --duration-ms")
	fl.StringVar(&f.pattern, "transactional-id-pattern", "", "only transactional ids matching this regular expression (re2, whole id; Kafka 4.1+)")
	fl.BoolVar(&asJSON, "json", false, "print a JSON array of {transactional_id, coordinator, producer_id, state}")
	_ = fl.MarkHidden("duration-filter")
	cmd.MarkFlagsMutuallyExclusive("duration-ms", "duration-filter")
	return cmd
}

// listTransactions asks every broker (ListTransactions is answered by each
// coordinator for the ids it owns), again while a coordinator is loading.
func listTransactions(ctx context.Context, cl *kgo.Client, f listFilter) (listResult, error) {
	return retryCoordinator(ctx, func() (listResult, error) { return listTransactionsOnce(ctx, cl, f) }, nil)
}

func listTransactionsOnce(ctx context.Context, cl *kgo.Client, f listFilter) (listResult, error) {
	req := kmsg.NewPtrListTransactionsRequest()
	req.StateFilters = f.states
	req.ProducerIDFilters = f.producerIDs
	req.DurationFilterMillis = f.durationMs
	if f.pattern != "" {
		req.TransactionalIDPattern = &f.pattern
	}
	res := listResult{listings: []txnListing{}} // --json prints [] for none
	unknown := make(map[string]bool)
	for _, shard := range cl.RequestSharded(ctx, req) {
		if shard.Err != nil {
			return res, fmt.Errorf("broker %d: %w", shard.Meta.NodeID, describe(shard.Err))
		}
		resp := shard.Resp.(*kmsg.ListTransactionsResponse)
		if err := checkListVersion(f, shard.Meta.NodeID, resp.Version); err != nil {
			return res, err
		}
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			return res, fmt.Errorf("broker %d: %w", shard.Meta.NodeID, describe(err))
		}
		for _, s := range resp.UnknownStateFilters {
			unknown[s] = true
		}
		for _, t := range resp.TransactionStates {
			res.listings = append(res.listings, txnListing{
				TransactionalID: t.TransactionalID,
				Coordinator:     shard.Meta.NodeID,
				ProducerID:      t.ProducerID,
				State:           t.TransactionState,
			})
		}
	}
	sort.Slice(res.listings, func(i, j int) bool { return res.listings[i].TransactionalID < res.listings[j].TransactionalID })
	for s := range unknown {
		res.unknownStates = append(res.unknownStates, s)
	}
	sort.Strings(res.unknownStates)
	return res, nil
}

// checkListVersion refuses an answer from a broker too old to have applied
// a filter that was asked for: its list would be silently unfiltered.
func checkListVersion(f listFilter, broker int32, version int16) error {
	need, flag := int16(0), ""
	switch {
	case f.pattern != "":
		need, flag = 2, "--transactional-id-pattern"
	case f.durationMs >= 0:
		need, flag = 1, "--duration-ms"
	}
	if version >= need {
		return nil
	}
	return fmt.Errorf("broker %d answers ListTransactions v%d, %s needs v%d: %w",
		broker, version, flag, need, describe(kerr.UnsupportedVersion))
}

// completeTxnIDs completes transactional ids by listing them, within a
// short timeout; nothing is offered when the cluster cannot be reached.
func completeTxnIDs(conn *connection) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
		quick := *conn
		quick.timeout = min(conn.timeout, 3*time.Second)
		s, err := openTxnSession(cmd, &quick, keyListTransactions)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		defer s.done()
		res, err := listTransactionsOnce(s.ctx, s.cl, listFilter{durationMs: -1})
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var ids []string
		for _, l := range res.listings {
			if strings.HasPrefix(l.TransactionalID, prefix) {
				ids = append(ids, l.TransactionalID)
			}
		}
		return ids, cobra.ShellCompDirectiveNoFileComp
	}
}
