package config

// brokerKeyNotes are notes for docs/configuration.md's "enforced" column on keys Sluice reads
// but acts on differently from Kafka. They are annotations only: whether a key is enforced is
// whether Sluice's non-test code reads it (keys_read_gen.go, written by
// tools/configgen/keyuse), and TestBrokerKeyNotesNameReadKeys refuses a note on a key nothing
// reads.
func brokerKeyNotes() map[string]string {
	return map[string]string{
		"log.dir":                                          "used when log.dirs is unset",
		"unclean.leader.election.enable":                   "the controller reads the topic's value, then the dynamic cluster-wide default; not the file",
		"max.connections":                                  "0 means no limit (Kafka: only the inter-broker listener)",
		"max.connections.per.ip.overrides":                 "host names resolved once at start-up",
		"queued.max.request.bytes":                         "counts request buffers as they grow with the bytes that arrived, not the announced size; frames of 16 KiB or less never wait; -1 leaves sluice.queued.max.request.bytes in force",
		"connections.max.idle.ms":                          "also the write deadline: a response that makes no progress for this long (a streamed Fetch response: not written whole) closes the connection",
		"group.share.min.session.timeout.ms":               "checked at start-up and bounds the GROUP config, which is stored but not applied to share groups",
		"group.share.max.session.timeout.ms":               "checked at start-up and bounds the GROUP config, which is stored but not applied to share groups",
		"group.share.min.heartbeat.interval.ms":            "checked at start-up and bounds the GROUP config, which is stored but not applied to share groups",
		"group.share.max.heartbeat.interval.ms":            "checked at start-up and bounds the GROUP config, which is stored but not applied to share groups",
		"group.share.assignors":                            "only Kafka's built-in simple assignor",
		"group.share.min.assignment.interval.ms":           "checked at start-up, as Kafka",
		"group.share.max.assignment.interval.ms":           "checked at start-up, as Kafka",
		"group.share.record.lock.duration.ms":              "the default of the GROUP config share.record.lock.duration.ms",
		"group.share.min.record.lock.duration.ms":          "bounds the GROUP config, as Kafka",
		"group.share.max.record.lock.duration.ms":          "bounds the GROUP config, as Kafka",
		"group.share.delivery.count.limit":                 "the default of the GROUP config share.delivery.count.limit",
		"group.share.min.delivery.count.limit":             "bounds the GROUP config, as Kafka",
		"group.share.max.delivery.count.limit":             "bounds the GROUP config, as Kafka",
		"group.share.partition.max.record.locks":           "the default of the GROUP config share.partition.max.record.locks",
		"group.share.min.partition.max.record.locks":       "bounds the GROUP config, as Kafka",
		"group.share.max.partition.max.record.locks":       "bounds the GROUP config, as Kafka",
		"share.coordinator.state.topic.replication.factor": "capped at the number of brokers on a smaller cluster",
		"group.consumer.min.session.timeout.ms":            "checked at start-up and bounds the GROUP config consumer.session.timeout.ms, as Kafka",
		"group.consumer.max.session.timeout.ms":            "checked at start-up and bounds the GROUP config consumer.session.timeout.ms, as Kafka",
		"group.consumer.min.heartbeat.interval.ms":         "checked at start-up and bounds the GROUP config consumer.heartbeat.interval.ms, as Kafka",
		"group.consumer.max.heartbeat.interval.ms":         "checked at start-up and bounds the GROUP config consumer.heartbeat.interval.ms, as Kafka",
		"group.consumer.assignors":                         "the built-in uniform and range only (short or class names); custom assignor classes are refused at start-up",
		"authorizer.class.name":                            "empty (no authorizer: everything allowed) or org.apache.kafka.metadata.authorizer.StandardAuthorizer; any other class stops start-up. Its super.users and allow.everyone.if.no.acl.found are read as Kafka's StandardAuthorizer reads them",
		"sasl.enabled.mechanisms":                          "PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER; GSSAPI (Kafka's default) stops start-up; also as listener.name.<listener>.sasl.enabled.mechanisms",
		"sasl.mechanism.inter.broker.protocol":             "PLAIN or SCRAM; the inter-broker listener's <mechanism>.sasl.jaas.config gives the username and password",
		"sasl.mechanism.controller.protocol":               "PLAIN, with the controller listener's plain.sasl.jaas.config username and password; SCRAM stops start-up (its credentials live in the metadata log the controllers replicate)",
		"connections.max.reauth.ms":                        "also as listener.name.<listener>.<mechanism>.connections.max.reauth.ms",
		"sasl.server.callback.handler.class":               "only as listener.name.<listener>.oauthbearer.sasl.server.callback.handler.class naming OAuthBearerValidatorCallbackHandler (the JWT validator); any other class stops start-up",
		"sasl.oauthbearer.jwks.endpoint.url":               "file: or http(s): URL, read at start-up and every sasl.oauthbearer.jwks.endpoint.refresh.ms",
		"offsets.topic.replication.factor":                 "defaults to 1 on a single node",

		// TLS (internal/auth/tlsconf); each also as listener.name.<listener>.<key>.
		"ssl.keystore.type":                     "JKS, PKCS12 or PEM; the file's bytes decide between JKS and PKCS12, as Java's keystore.type.compat",
		"ssl.keystore.location":                 "read again when its content changes (checked at most once a second), without a restart",
		"ssl.key.password":                      "JKS key entries and encrypted PEM keys (PBES2 PKCS#8)",
		"ssl.truststore.type":                   "JKS, PKCS12 (Java's trusted-certificate entries) or PEM",
		"ssl.truststore.location":               "read again when its content changes, as the keystore",
		"ssl.enabled.protocols":                 "a contiguous range of TLSv1 to TLSv1.3",
		"ssl.cipher.suites":                     "TLS 1.2 and older suites by their IANA/JSSE names; Go enables every TLS 1.3 suite, so naming only TLS 1.3 suites makes TLS 1.3 the floor",
		"ssl.endpoint.identification.algorithm": "the broker's own clients (replication, forwarding, the quorum)",
		"ssl.principal.mapping.rules":           "patterns run by a backtracking engine with .NET syntax (regexp2), Java's for all but possessive quantifiers",
		"ssl.allow.dn.changes":                  "checked when a changed keystore file is read again",
		"ssl.allow.san.changes":                 "checked when a changed keystore file is read again",
		"ssl.engine.factory.class":              "must be empty: a Java class cannot be loaded",

		// The transaction coordinator (internal/coordinator/txncoord).
		"transaction.state.log.replication.factor":   "capped at the unfenced brokers when __transaction_state is created; defaults to 1 on a single node",
		"transaction.state.log.min.isr":              "capped at the topic's replication factor when it is created; defaults to 1 on a single node",
		"add.partitions.to.txn.retry.backoff.max.ms": "capped at request.timeout.ms and at the produce request's timeout",

		// The quorum (docs/quorum.md maps the timeouts onto raft ticks).
		"controller.quorum.election.timeout.ms": "raft ticks; randomised between 1x and 2x as etcd raft does",
		"controller.quorum.fetch.timeout.ms":    "raft check-quorum, and the observers' metadata fetch timeout",
		"controller.quorum.request.timeout.ms":  "bounds broker heartbeats to the active controller",

		// Metadata snapshots (internal/node/snapshot.go).

		// Client quotas (internal/quota).
	}
}

// EnforcedBrokerKey reports whether Sluice acts on a broker key, with a note: it does when
// non-test code reads the key, or a topic key whose broker synonym it is (resolving a topic
// setting reads its synonyms: log.retention.hours for retention.ms).
func EnforcedBrokerKey(key string) (bool, string) {
	read := keysReadByCode()
	_, ok := read["broker:"+key]
	if !ok {
		ok = topicSynonymRead(read, key)
	}
	if !ok {
		return false, ""
	}
	return true, brokerKeyNotes()[key]
}

// topicSynonymRead reports whether key is a broker synonym of a topic key the code reads.
func topicSynonymRead(read map[string][]string, key string) bool {
	for _, d := range topicKeyDefs() {
		if _, ok := read["topic:"+d.Name]; !ok {
			continue
		}
		for _, s := range d.Synonyms {
			if s.Name == key {
				return true
			}
		}
	}
	return false
}

// EnforcedTopicKey reports whether Sluice acts on a topic key: it does when the code reads the
// topic key or one of its broker synonyms, which are the same setting at broker scope (the
// controller reads unclean.leader.election.enable by name). The note is the first synonym's.
func EnforcedTopicKey(d KeyDef) (bool, string) {
	read := keysReadByCode()
	_, ok := read["topic:"+d.Name]
	note := ""
	for _, s := range d.Synonyms {
		if _, direct := read["broker:"+s.Name]; direct {
			ok = true
		}
		if n := brokerKeyNotes()[s.Name]; n != "" && note == "" {
			note = n
		}
	}
	if !ok {
		return false, ""
	}
	return true, note
}
