package node

// This file maps the configuration onto each package's own Options: only the
// node (and config) see the whole configuration.

import (
	"sort"
	"strings"
	"time"

	"github.com/sluice-io/sluice/internal/broker"
	"github.com/sluice-io/sluice/internal/commitlog"
	"github.com/sluice-io/sluice/internal/commitlog/cleaner"
	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/coordinator/txn"
	"github.com/sluice-io/sluice/internal/quorum"
	"github.com/sluice-io/sluice/internal/replication"
)

// millis converts a millisecond setting into a Duration, saturating.
func millis(ms int64) time.Duration { return broker.Millis(ms) }

// cleanerOptions maps the broker's log.cleaner.* settings onto the cleaner's.
func cleanerOptions(cfg *config.Config) cleaner.Options {
	return cleaner.Options{
		Threads:                int(cfg.Int(config.LogCleanerThreads)),
		DedupeBufferSize:       cfg.Long(config.LogCleanerDedupeBufferSize),
		DedupeBufferLoadFactor: cfg.Double(config.LogCleanerIOBufferLoadFactor),
		IOBufferSize:           int(cfg.Int(config.LogCleanerIOBufferSize)),
		Backoff:                millis(cfg.Long(config.LogCleanerBackoffMs)),
	}
}

// managerOptions maps the broker's log settings onto the log manager's.
func managerOptions(cfg *config.Config, defaults commitlog.Options) commitlog.ManagerOptions {
	return commitlog.ManagerOptions{
		Dirs:                              cfg.LogDirs(),
		Defaults:                          defaults,
		RetentionCheckInterval:            millis(cfg.Long(config.LogRetentionCheckIntervalMs)),
		FlushCheckInterval:                millis(cfg.Long(config.LogFlushSchedulerIntervalMs)),
		RecoveryPointCheckpointInterval:   millis(int64(cfg.Int(config.LogFlushOffsetCheckpointIntervalMs))),
		TailFlushMinBytes:                 commitlog.DefaultTailFlushMinBytes,
		LogStartCheckpointInterval:        millis(int64(cfg.Int(config.LogFlushStartOffsetCheckpointIntervalMs))),
		ProducerIDExpiration:              millis(int64(cfg.Int(config.ProducerIDExpirationMs))),
		ProducerIDExpirationCheckInterval: millis(int64(cfg.Int(config.ProducerIDExpirationCheckIntervalMs))),
		DeleteCheckInterval:               time.Second,
	}
}

// replicationOptions builds the replica manager's follower and ISR
// settings from the replica.* keys. A single node has no other replica:
// it runs no fetchers and sends no ISR changes (it would only ever keep
// itself in the ISR).
func (n *Node) replicationOptions() replication.ReplicationOptions {
	if n.cfg.SingleNode() {
		return replication.ReplicationOptions{}
	}
	return replication.ReplicationOptions{
		Transport:             replication.NewKafkaTransport(n.Image, n.cfg.InterBrokerListenerName(), n.peers),
		AlterPartition:        broker.ISRSender{NodeID: n.cfg.NodeID(), Epoch: n.broker.lifecycle.Epoch, Controller: n.channel},
		BrokerEpoch:           n.broker.lifecycle.Epoch,
		NumReplicaFetchers:    int(n.cfg.Int(config.NumReplicaFetchers)),
		ReplicaLagTimeMax:     millis(n.cfg.Long(config.ReplicaLagTimeMaxMs)),
		FetchWaitMax:          millis(int64(n.cfg.Int(config.ReplicaFetchWaitMaxMs))),
		FetchMinBytes:         n.cfg.Int(config.ReplicaFetchMinBytes),
		FetchMaxBytes:         n.cfg.Int(config.ReplicaFetchMaxBytes),
		FetchResponseMaxBytes: n.cfg.Int(config.ReplicaFetchResponseMaxBytes),
		FetchBackoff:          millis(int64(n.cfg.Int(config.ReplicaFetchBackoffMs))),
		LeaderQuota:           n.broker.throttles.leader,
		FollowerQuota:         n.broker.throttles.follower,
	}
}

// metadataLogDir is metadata.log.dir, or the first log dir, as in Kafka.
func metadataLogDir(cfg *config.Config) string {
	if cfg.IsSet(config.MetadataLogDir) {
		return cfg.String(config.MetadataLogDir)
	}
	return cfg.LogDirs()[0]
}

// voterAddrs maps each voter's id to its CONTROLLER address.
func voterAddrs(cfg *config.Config) map[int32]string {
	out := map[int32]string{}
	for _, v := range cfg.Voters() {
		out[v.ID] = v.Addr()
	}
	return out
}

// voterEndpoints are the voters' CONTROLLER endpoints in id order.
func voterEndpoints(cfg *config.Config) []quorum.VoterEndpoint {
	var out []quorum.VoterEndpoint
	for _, v := range cfg.Voters() {
		out = append(out, quorum.VoterEndpoint{ID: v.ID, Host: v.Host, Port: int32(v.Port)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// securityProtocolID is Kafka's SecurityProtocol id of a protocol name.
func securityProtocolID(name string) int16 {
	switch strings.ToUpper(name) {
	case "SSL":
		return 1
	case "SASL_PLAINTEXT":
		return 2
	case "SASL_SSL":
		return 3
	default:
		return 0
	}
}

// txnConfig maps the transaction coordinator's keys.
func txnConfig(cfg *config.Config) txn.Config {
	c := txn.DefaultConfig()
	c.TransactionalIDExpiration = millis(int64(cfg.Int(config.TransactionalIDExpirationMs)))
	c.MaxTimeout = millis(int64(cfg.Int(config.TransactionMaxTimeoutMs)))
	c.AbortTimedOutInterval = millis(int64(cfg.Int(config.TransactionAbortTimedOutTransactionCleanupIntervalMs)))
	c.RemoveExpiredInterval = millis(int64(cfg.Int(config.TransactionRemoveExpiredTransactionCleanupIntervalMs)))
	return c
}

// verificationRetry maps add.partitions.to.txn.retry.backoff(.max).ms, the
// maximum capped at request.timeout.ms as Kafka's ReplicaManager does.
func verificationRetry(cfg *config.Config) replication.VerificationRetry {
	return replication.VerificationRetry{
		Backoff: millis(int64(cfg.Int(config.AddPartitionsToTxnRetryBackoffMs))),
		Max:     millis(int64(min(cfg.Int(config.AddPartitionsToTxnRetryBackoffMaxMs), cfg.Int(config.RequestTimeoutMs)))),
	}
}
