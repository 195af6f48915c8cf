// Package sluicetest runs a real Sluice cluster inside a Go test: one node
// or several, in this process, on free ports of 127.0.0.1, with Sluice's
// own storage (a temp dir, or an in-memory file system that simulates
// power loss), replication and KRaft metadata quorum. Any Kafka client
// reaches it at ListenAddrs; Client returns a franz-go client.
//
//	c := sluicetest.Start(t, sluicetest.NumNodes(3), sluicetest.SeedTopics(3, "orders"))
//	cl, err := c.Client()
//
// Like franz-go's kfake, a test can see, delay, drop, fail or answer any
// request by API key (ControlKey, KeepControl, SleepControl, CurrentNode),
// and it can inject faults: a clean stop, a kill (no flush; with InMemory
// the unsynced writes are lost), a restart, network cuts between nodes
// (CutLink, Isolate) and failing file operations (FailDisk).
//
// Unlike kfake, nothing is simulated: every request is served by the same
// code as `sluice server`, so what a test sees is what a production
// cluster does, at the price of a real start-up (milliseconds) and real
// timeouts (a killed node's partitions move once broker.session.timeout.ms
// has passed; lower it with Config for fault tests).
//
// A few settings differ from Kafka's defaults so that a cluster starts in
// tens of milliseconds (Config overrides any of them):
// controller.quorum.election.timeout.ms=100 on 10 ms Raft ticks (fetch
// timeout 200), group.initial.rebalance.delay.ms=0, and the offsets and
// transaction topics' replication factor min(3, nodes). Client sets kgo's
// MetadataMinAge to 10 ms. A node whose log dirs all fail halts as a Kafka
// broker does, but stops instead of ending the test binary (Running
// reports it; RestartNode starts it again).
//
// Nodes are numbered 1 to NumNodes (their node.id). Every node is a
// combined broker and controller and a voter of a static quorum; the
// nodes' connections to each other pass through a fault proxy, clients'
// connections do not.
package sluicetest
