// Package coordinator holds Kafka's coordinators, each a state machine per
// partition of an internal topic run by the shared coordinator runtime
// (Kafka's coordinator-common):
//
//   - runtime: the runtime (Kafka's CoordinatorRuntime): a shard (event
//     loop and writer) per led partition, load by replay, acks=all writes,
//     timers, routing of operations; ReplicaWriter and the creation of the
//     internal topic on first use.
//   - group: the classic consumer-group protocol as a pure state machine.
//   - groupcoord: the group coordinator (Kafka's GroupCoordinatorService),
//     group.Manager shards of __consumer_offsets on the runtime.
//   - txn and txncoord: the transaction coordinator over
//     __transaction_state.
//   - share and sharecoord: the share coordinator over
//     __share_group_state (KIP-932).
//
// This package itself has no code.
package coordinator
