package config

import "strings"

// enforcedBrokerKeys are the broker keys Sluice's first release acts on; every other Kafka key
// is accepted, validated, stored and reported by DescribeConfigs, but does not change
// behaviour yet. docs/configuration.md is generated from this list (tools/configgen), so edit
// it here when a package starts honouring a key. The value is a note for the docs ("" if the
// key behaves exactly as in Kafka).
func enforcedBrokerKeys() map[string]string {
	return map[string]string{
		"log.dirs":                                               "",
		"log.dir":                                                "used when log.dirs is unset",
		"listeners":                                              "",
		"advertised.listeners":                                   "",
		"listener.security.protocol.map":                         "",
		"inter.broker.listener.name":                             "",
		"security.inter.broker.protocol":                         "",
		"node.id":                                                "",
		"process.roles":                                          "",
		"socket.request.max.bytes":                               "",
		"message.max.bytes":                                      "",
		"log.segment.bytes":                                      "",
		"log.roll.ms":                                            "",
		"log.roll.hours":                                         "",
		"log.roll.jitter.ms":                                     "",
		"log.index.size.max.bytes":                               "",
		"log.index.interval.bytes":                               "",
		"log.cleanup.policy":                                     "",
		"log.cleaner.enable":                                     "",
		"log.cleaner.threads":                                    "",
		"log.cleaner.dedupe.buffer.size":                         "",
		"log.cleaner.io.buffer.load.factor":                      "",
		"log.cleaner.io.buffer.size":                             "",
		"log.cleaner.backoff.ms":                                 "",
		"log.cleaner.min.cleanable.ratio":                        "",
		"log.cleaner.min.compaction.lag.ms":                      "",
		"log.cleaner.max.compaction.lag.ms":                      "",
		"log.cleaner.delete.retention.ms":                        "",
		"log.segment.delete.delay.ms":                            "",
		"log.message.timestamp.type":                             "",
		"log.message.timestamp.before.max.ms":                    "",
		"log.message.timestamp.after.max.ms":                     "",
		"min.insync.replicas":                                    "",
		"unclean.leader.election.enable":                         "the controller reads the topic's value, then the dynamic cluster-wide default; not the file",
		"max.connections":                                        "0 means no limit (Kafka: only the inter-broker listener)",
		"max.connections.per.ip":                                 "",
		"max.connections.per.ip.overrides":                       "host names resolved once at start-up",
		"queued.max.request.bytes":                               "counts request buffers as they grow with the bytes that arrived, not the announced size; frames of 16 KiB or less never wait; -1 leaves sluice.queued.max.request.bytes in force",
		"connections.max.idle.ms":                                "also the write deadline: a response that makes no progress for this long (a streamed Fetch response: not written whole) closes the connection",
		"fetch.max.bytes":                                        "",
		"max.incremental.fetch.session.cache.slots":              "",
		"metadata.log.dir":                                       "",
		"producer.id.expiration.ms":                              "",
		"producer.id.expiration.check.interval.ms":               "",
		"group.initial.rebalance.delay.ms":                       "",
		"group.min.session.timeout.ms":                           "",
		"group.max.session.timeout.ms":                           "",
		"group.max.size":                                         "",
		"group.share.session.timeout.ms":                         "",
		"group.share.min.session.timeout.ms":                     "checked at start-up and bounds the GROUP config, which is stored but not applied to share groups",
		"group.share.max.session.timeout.ms":                     "checked at start-up and bounds the GROUP config, which is stored but not applied to share groups",
		"group.share.heartbeat.interval.ms":                      "",
		"group.share.min.heartbeat.interval.ms":                  "checked at start-up and bounds the GROUP config, which is stored but not applied to share groups",
		"group.share.max.heartbeat.interval.ms":                  "checked at start-up and bounds the GROUP config, which is stored but not applied to share groups",
		"group.share.max.size":                                   "",
		"group.share.assignors":                                  "only Kafka's built-in simple assignor",
		"group.share.assignment.interval.ms":                     "",
		"group.share.min.assignment.interval.ms":                 "checked at start-up, as Kafka",
		"group.share.max.assignment.interval.ms":                 "checked at start-up, as Kafka",
		"group.share.initialize.retry.interval.ms":               "",
		"group.share.record.lock.duration.ms":                    "the default of the GROUP config share.record.lock.duration.ms",
		"group.share.min.record.lock.duration.ms":                "bounds the GROUP config, as Kafka",
		"group.share.max.record.lock.duration.ms":                "bounds the GROUP config, as Kafka",
		"group.share.delivery.count.limit":                       "the default of the GROUP config share.delivery.count.limit",
		"group.share.min.delivery.count.limit":                   "bounds the GROUP config, as Kafka",
		"group.share.max.delivery.count.limit":                   "bounds the GROUP config, as Kafka",
		"group.share.partition.max.record.locks":                 "the default of the GROUP config share.partition.max.record.locks",
		"group.share.min.partition.max.record.locks":             "bounds the GROUP config, as Kafka",
		"group.share.max.partition.max.record.locks":             "bounds the GROUP config, as Kafka",
		"group.share.max.share.sessions":                         "",
		"share.coordinator.state.topic.num.partitions":           "",
		"share.coordinator.state.topic.replication.factor":       "capped at the number of brokers on a smaller cluster",
		"share.coordinator.state.topic.min.isr":                  "",
		"share.coordinator.state.topic.segment.bytes":            "",
		"share.coordinator.state.topic.prune.interval.ms":        "",
		"share.coordinator.snapshot.update.records.per.snapshot": "",
		"share.coordinator.cold.partition.snapshot.interval.ms":  "",
		"share.coordinator.write.timeout.ms":                     "",
		"group.consumer.session.timeout.ms":                      "",
		"group.consumer.min.session.timeout.ms":                  "checked at start-up and bounds the GROUP config consumer.session.timeout.ms, as Kafka",
		"group.consumer.max.session.timeout.ms":                  "checked at start-up and bounds the GROUP config consumer.session.timeout.ms, as Kafka",
		"group.consumer.heartbeat.interval.ms":                   "",
		"group.consumer.min.heartbeat.interval.ms":               "checked at start-up and bounds the GROUP config consumer.heartbeat.interval.ms, as Kafka",
		"group.consumer.max.heartbeat.interval.ms":               "checked at start-up and bounds the GROUP config consumer.heartbeat.interval.ms, as Kafka",
		"group.consumer.max.size":                                "",
		"group.consumer.assignors":                               "the built-in uniform and range only (short or class names); custom assignor classes are refused at start-up",
		"group.consumer.migration.policy":                        "",
		"offset.metadata.max.bytes":                              "",
		"delete.topic.enable":                                    "",
		"num.partitions":                                         "",
		"default.replication.factor":                             "",
		"auto.create.topics.enable":                              "",
		"authorizer.class.name":                                  "empty (no authorizer: everything allowed) or org.apache.kafka.metadata.authorizer.StandardAuthorizer; any other class stops start-up. Its super.users and allow.everyone.if.no.acl.found are read as Kafka's StandardAuthorizer reads them",
		"sasl.enabled.mechanisms":                                "PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER; GSSAPI (Kafka's default) stops start-up; also as listener.name.<listener>.sasl.enabled.mechanisms",
		"sasl.mechanism.inter.broker.protocol":                   "PLAIN or SCRAM; the inter-broker listener's <mechanism>.sasl.jaas.config gives the username and password",
		"sasl.mechanism.controller.protocol":                     "PLAIN, with the controller listener's plain.sasl.jaas.config username and password; SCRAM stops start-up (its credentials live in the metadata log the controllers replicate)",
		"sasl.server.max.receive.size":                           "",
		"connections.max.reauth.ms":                              "also as listener.name.<listener>.<mechanism>.connections.max.reauth.ms",
		"connection.failed.authentication.delay.ms":              "",
		"sasl.server.callback.handler.class":                     "only as listener.name.<listener>.oauthbearer.sasl.server.callback.handler.class naming OAuthBearerValidatorCallbackHandler (the JWT validator); any other class stops start-up",
		"sasl.oauthbearer.jwks.endpoint.url":                     "file: or http(s): URL, read at start-up and every sasl.oauthbearer.jwks.endpoint.refresh.ms",
		"sasl.oauthbearer.jwks.endpoint.refresh.ms":              "",
		"sasl.oauthbearer.expected.audience":                     "",
		"sasl.oauthbearer.expected.issuer":                       "",
		"sasl.oauthbearer.clock.skew.seconds":                    "",
		"sasl.oauthbearer.sub.claim.name":                        "",
		"sasl.oauthbearer.scope.claim.name":                      "",
		"offsets.topic.replication.factor":                       "defaults to 1 on a single node",

		// TLS (internal/auth/tlsconf); each also as listener.name.<listener>.<key>.
		"ssl.keystore.type":                     "JKS, PKCS12 or PEM; the file's bytes decide between JKS and PKCS12, as Java's keystore.type.compat",
		"ssl.keystore.location":                 "read again when its content changes (checked at most once a second), without a restart",
		"ssl.keystore.password":                 "",
		"ssl.key.password":                      "JKS key entries and encrypted PEM keys (PBES2 PKCS#8)",
		"ssl.keystore.certificate.chain":        "",
		"ssl.keystore.key":                      "",
		"ssl.truststore.type":                   "JKS, PKCS12 (Java's trusted-certificate entries) or PEM",
		"ssl.truststore.location":               "read again when its content changes, as the keystore",
		"ssl.truststore.password":               "",
		"ssl.truststore.certificates":           "",
		"ssl.client.auth":                       "",
		"ssl.enabled.protocols":                 "a contiguous range of TLSv1 to TLSv1.3",
		"ssl.cipher.suites":                     "TLS 1.2 and older suites by their IANA/JSSE names; Go enables every TLS 1.3 suite, so naming only TLS 1.3 suites makes TLS 1.3 the floor",
		"ssl.endpoint.identification.algorithm": "the broker's own clients (replication, forwarding, the quorum)",
		"ssl.principal.mapping.rules":           "patterns run by a backtracking engine with .NET syntax (regexp2), Java's for all but possessive quantifiers",
		"ssl.allow.dn.changes":                  "checked when a changed keystore file is read again",
		"ssl.allow.san.changes":                 "checked when a changed keystore file is read again",
		"ssl.engine.factory.class":              "must be empty: a Java class cannot be loaded",

		// The transaction coordinator (internal/coordinator/txncoord).
		"transaction.state.log.num.partitions":                        "",
		"transaction.state.log.replication.factor":                    "capped at the unfenced brokers when __transaction_state is created; defaults to 1 on a single node",
		"transaction.state.log.min.isr":                               "capped at the topic's replication factor when it is created; defaults to 1 on a single node",
		"transaction.state.log.segment.bytes":                         "",
		"transaction.max.timeout.ms":                                  "",
		"transactional.id.expiration.ms":                              "",
		"transaction.abort.timed.out.transaction.cleanup.interval.ms": "",
		"transaction.remove.expired.transaction.cleanup.interval.ms":  "",
		"transaction.partition.verification.enable":                   "",
		"add.partitions.to.txn.retry.backoff.ms":                      "",
		"add.partitions.to.txn.retry.backoff.max.ms":                  "capped at request.timeout.ms and at the produce request's timeout",

		// The quorum (docs/quorum.md maps the timeouts onto raft ticks).
		"controller.listener.names":             "",
		"controller.quorum.voters":              "",
		"controller.quorum.election.timeout.ms": "raft ticks; randomised between 1x and 2x as etcd raft does",
		"controller.quorum.fetch.timeout.ms":    "raft check-quorum, and the observers' metadata fetch timeout",
		"controller.quorum.request.timeout.ms":  "bounds broker heartbeats to the active controller",

		// Metadata snapshots (internal/node/snapshot.go).
		"metadata.log.max.record.bytes.between.snapshots": "",
		"metadata.log.max.snapshot.interval.ms":           "",

		// Client quotas (internal/quota).
		"quota.window.num":                     "",
		"quota.window.size.seconds":            "",
		"controller.quota.window.num":          "",
		"controller.quota.window.size.seconds": "",
	}
}

// enforcedBrokerPrefixes are key families enforced as a whole.
func enforcedBrokerPrefixes() []string {
	return []string{"log.retention.", "log.flush.", "offsets.topic."}
}

// EnforcedBrokerKey reports whether Sluice acts on a broker key in this release, with a note.
func EnforcedBrokerKey(key string) (bool, string) {
	if note, ok := enforcedBrokerKeys()[key]; ok {
		return true, note
	}
	for _, p := range enforcedBrokerPrefixes() {
		if strings.HasPrefix(key, p) {
			return true, ""
		}
	}
	return false, ""
}

// EnforcedTopicKey reports whether Sluice acts on a topic key: it does when it acts on the
// key's broker synonyms, which are the same setting at broker scope.
func EnforcedTopicKey(d KeyDef) (bool, string) {
	for _, s := range d.Synonyms {
		if ok, note := EnforcedBrokerKey(s.Name); ok {
			return true, note
		}
	}
	return false, ""
}
