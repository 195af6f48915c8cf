package sluicetest

import (
	"log/slog"
	"maps"
)

// Opt configures a Cluster.
type Opt interface{ apply(*options) }

type optFunc func(*options)

func (f optFunc) apply(o *options) { f(o) }

type options struct {
	nodes    int
	inMemory bool
	dir      string
	config   map[string]string
	seeds    []seedTopic
	logger   *slog.Logger
}

type seedTopic struct {
	partitions int32
	topics     []string
}

func defaultOptions() options {
	return options{nodes: 1, config: map[string]string{}}
}

// NumNodes sets the number of nodes (default 1). Every node is a combined
// broker and controller, and every node is a voter of a static quorum
// (controller.quorum.voters lists them all).
func NumNodes(n int) Opt { return optFunc(func(o *options) { o.nodes = max(n, 1) }) }

// InMemory keeps every node's logs and metadata log in an in-memory file
// system (one per node) that simulates power loss: KillNode drops what the
// node wrote but did not fsync. Only the log dir lock files touch the disk
// (in a temp dir).
func InMemory() Opt { return optFunc(func(o *options) { o.inMemory = true }) }

// Dir puts the nodes' log dirs under path (node-1, node-2, ...) instead of
// a new temp dir, and leaves them there at Close. Each cluster formats its
// dirs anew: path must not hold another cluster's.
func Dir(path string) Opt { return optFunc(func(o *options) { o.dir = path }) }

// Config sets a server.properties key on every node, e.g.
// Config("min.insync.replicas", "2"). It wins over the cluster's own
// settings, the listeners and the quorum excepted.
func Config(key, value string) Opt {
	return optFunc(func(o *options) { o.config[key] = value })
}

// Configs sets several server.properties keys on every node.
func Configs(kv map[string]string) Opt {
	return optFunc(func(o *options) { maps.Copy(o.config, kv) })
}

// SeedTopics creates topics with the given partition count (replication
// factor min(3, nodes)) before NewCluster returns, each with a leader for
// every partition.
func SeedTopics(partitions int32, topics ...string) Opt {
	return optFunc(func(o *options) { o.seeds = append(o.seeds, seedTopic{partitions, topics}) })
}

// WithLogger sends the nodes' logs to l (each line carries node=<id>);
// without it they are discarded.
func WithLogger(l *slog.Logger) Opt { return optFunc(func(o *options) { o.logger = l }) }
