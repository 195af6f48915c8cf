// Package cli holds the client commands of the sluice binary: topic, cluster,
// group, txn, produce, consume and bench. They speak only the Kafka protocol (through
// franz-go's kgo and kadm), so they work against Sluice and Apache Kafka alike.
package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/version"
)

// DefaultBrokers is the bootstrap address used when neither --brokers nor
// the environment variable BrokersEnv says otherwise.
const DefaultBrokers = "127.0.0.1:9092"

// BrokersEnv names the environment variable that supplies --brokers.
const BrokersEnv = "SLUICE_BROKERS"

// AddCommands registers the client commands (topic, cluster, group, txn,
// produce, consume, bench) on the root command of the sluice binary.
func AddCommands(root *cobra.Command) {
	root.AddCommand(
		newTopicCommand(),
		newClusterCommand(),
		newProduceCommand(),
		newConsumeCommand(),
		newBenchCommand(),
		newGroupCommand(),
		newTxnCommand(),
		newACLCommand(),
		newUserCommand(),
		newBrokerCommand(),
		newVerifyCommand(),
	)
}

// connection holds the flags every client command shares: where the
// brokers are and how long one request may take.
type connection struct {
	brokers string
	timeout time.Duration
	// commandConfig is a Kafka client properties file with the security
	// settings (--command-config, as Kafka's tools).
	commandConfig string
	// wrapConn, when set, wraps every connection the client dials (produce
	// reads the server's error messages kgo drops through it).
	wrapConn func(net.Conn) net.Conn
}

// addConnectionFlags binds the shared flags as persistent flags of a
// top-level command, so its subcommands inherit them.
func addConnectionFlags(cmd *cobra.Command, c *connection) {
	cmd.PersistentFlags().StringVarP(&c.brokers, "brokers", "b", DefaultBrokers,
		"comma-separated bootstrap brokers (host:port); env "+BrokersEnv+" when the flag is not given")
	cmd.PersistentFlags().DurationVar(&c.timeout, "timeout", 15*time.Second,
		"how long a request (or the connection to the cluster) may take")
	cmd.PersistentFlags().StringVar(&c.commandConfig, "command-config", "",
		"Kafka client properties with the security settings (security.protocol, ssl.*, sasl.mechanism, sasl.jaas.config), as Kafka's tools take")
}

// seeds resolves the bootstrap list: the flag when given, then the
// environment, then the default.
func (c *connection) seeds(cmd *cobra.Command) []string {
	list := c.brokers
	if f := cmd.Flags().Lookup("brokers"); f != nil && !f.Changed {
		if env := strings.TrimSpace(os.Getenv(BrokersEnv)); env != "" {
			list = env
		}
	}
	var out []string
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// client builds a kgo client for the seeds with the given extra options.
// Dial and retry limits are bounded by the command timeout so that an
// unreachable cluster fails within it instead of retrying forever.
func (c *connection) client(cmd *cobra.Command, opts ...kgo.Opt) (*kgo.Client, error) {
	seeds := c.seeds(cmd)
	if len(seeds) == 0 {
		return nil, errors.New("no brokers given (--brokers or " + BrokersEnv + ")")
	}
	base := []kgo.Opt{
		kgo.SeedBrokers(seeds...),
		kgo.ClientID("sluice-cli"),
		softwareNameAndVersion(),
		kgo.DialTimeout(min(c.timeout, 10*time.Second)),
		kgo.RetryTimeout(c.timeout),
		// kadm answers Metadata from the client's cache when it is younger
		// than this (5 s by default): the commands that poll the cluster
		// (reassignments, decommission, rebalance) must see it as it is.
		kgo.MetadataMinAge(200 * time.Millisecond),
	}
	security, dial, err := c.securityParts()
	if err != nil {
		return nil, err
	}
	base = append(base, security...)
	if c.wrapConn != nil {
		if dial == nil {
			dial = (&net.Dialer{Timeout: min(c.timeout, 10*time.Second)}).DialContext
		}
		inner := dial
		dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := inner(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return c.wrapConn(conn), nil
		}
	}
	if dial != nil {
		base = append(base, kgo.Dialer(dial))
	}
	cl, err := kgo.NewClient(append(base, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", strings.Join(seeds, ","), err)
	}
	return cl, nil
}

// securityOpts are the client options of --command-config, none without
// it.
func (c *connection) securityOpts() ([]kgo.Opt, error) {
	if c.commandConfig == "" {
		return nil, nil
	}
	return commandConfigOpts(c.commandConfig)
}

// securityParts is securityOpts with the TLS dialer apart (nil when none).
func (c *connection) securityParts() ([]kgo.Opt, dialFunc, error) {
	if c.commandConfig == "" {
		return nil, nil, nil
	}
	return commandConfigParts(c.commandConfig)
}

// admin builds an admin client and checks the cluster answers, so that an
// unreachable server gives one clear error rather than a per-request one.
func (c *connection) admin(ctx context.Context, cmd *cobra.Command) (*kadm.Client, error) {
	cl, err := c.client(cmd)
	if err != nil {
		return nil, err
	}
	if err := c.ping(ctx, cmd, cl); err != nil {
		cl.Close()
		return nil, err
	}
	return kadm.NewClient(cl), nil
}

// ping checks that some broker answers within the timeout.
func (c *connection) ping(ctx context.Context, cmd *cobra.Command, cl *kgo.Client) error {
	pctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	if err := cl.Ping(pctx); err != nil {
		return fmt.Errorf("cannot reach brokers %s: %w", strings.Join(c.seeds(cmd), ","), describe(err))
	}
	return nil
}

// requestContext bounds one admin request by the timeout.
func (c *connection) requestContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.timeout)
}

// interruptible returns a context cancelled on SIGINT or SIGTERM, so long
// running commands (consume, produce from a terminal, bench) stop cleanly.
func interruptible(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	parent := cmd.Context()
	if parent == nil {
		parent = context.Background()
	}
	return signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
}

// splitKeyValue parses key=value; an empty key is an error.
func splitKeyValue(flag, s string) (string, string, error) {
	k, v, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return "", "", fmt.Errorf("%s %q: want key=value", flag, s)
	}
	return strings.TrimSpace(k), v, nil
}

// openAdmin connects an admin client and returns a context bounded by the
// timeout; done releases both.
func openAdmin(cmd *cobra.Command, conn *connection) (context.Context, *kadm.Client, func(), error) {
	base := cmd.Context()
	if base == nil {
		base = context.Background()
	}
	adm, err := conn.admin(base, cmd)
	if err != nil {
		return nil, nil, nil, err
	}
	ctx, cancel := conn.requestContext(base)
	return ctx, adm, func() { cancel(); adm.Close() }, nil
}

// completeTopics completes topic names by asking the cluster (within a short
// timeout; nothing is offered when it cannot be reached). single stops after
// the first argument, for commands that take one topic.
func completeTopics(conn *connection, single bool) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
		if single && len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		quick := *conn
		quick.timeout = min(conn.timeout, 3*time.Second)
		ctx, adm, done, err := openAdmin(cmd, &quick)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		defer done()
		topics, err := adm.ListTopics(ctx)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var names []string
		for _, t := range topics.Sorted() {
			if strings.HasPrefix(t.Topic, prefix) {
				names = append(names, t.Topic)
			}
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}

// softwareNameAndVersion names the CLI's clients in ApiVersions as Sluice
// of this release, so a broker's logs and metrics tell them apart.
func softwareNameAndVersion() kgo.Opt {
	return kgo.SoftwareNameAndVersion("sluice", softwareVersion(version.Version()))
}

// softwareVersion fits v to the client software version Kafka accepts in
// ApiVersions ([a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?; a broker
// refuses the request otherwise): other characters (a build's "+meta")
// become '-', and the ends are trimmed to a letter or digit.
func softwareVersion(v string) string {
	b := []byte(v)
	for i, c := range b {
		if !isAlnum(c) && c != '-' && c != '.' {
			b[i] = '-'
		}
	}
	s := strings.TrimFunc(string(b), func(r rune) bool { return r > 127 || !isAlnum(byte(r)) })
	if s == "" {
		return "unknown"
	}
	return s
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// hideEmptyDefault keeps pflag from printing "(default [])" after a list
// flag whose usage already says what no value means: pflag counts an empty
// list as a zero value for string lists only.
func hideEmptyDefault(cmd *cobra.Command, name string) {
	if f := cmd.Flags().Lookup(name); f != nil && f.DefValue == "[]" {
		f.DefValue = ""
	}
}
