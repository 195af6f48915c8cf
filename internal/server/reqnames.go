package server

import "github.com/twmb/franz-go/pkg/kmsg"

// kafkaRequestName is the name Kafka's ApiKeys gives key, the "request"
// label of Kafka's RequestMetrics. kmsg's names are Kafka's but for the
// capitalisation of a few acronyms and one older name; the request
// message names of Kafka 4.4 decide.
func kafkaRequestName(key int16) string {
	switch key {
	case 4:
		return "LeaderAndIsr"
	case 17:
		return "SaslHandshake"
	case 22:
		return "InitProducerId"
	case 29:
		return "DescribeAcls"
	case 30:
		return "CreateAcls"
	case 31:
		return "DeleteAcls"
	case 36:
		return "SaslAuthenticate"
	case 45:
		return "AlterPartitionReassignments"
	case 50:
		return "DescribeUserScramCredentials"
	case 51:
		return "AlterUserScramCredentials"
	case 67:
		return "AllocateProducerIds"
	}
	return kmsg.NameForKey(key)
}

// Kafka's names of the two kinds of Fetch (RequestMetrics'
// CONSUMER_FETCH_METRIC_NAME and FOLLOW_FETCH_METRIC_NAME).
const (
	fetchConsumerName = "FetchConsumer"
	fetchFollowerName = "FetchFollower"
)

// fetchFromFollower reports whether a Fetch comes from a replica (replica
// id >= 0, in ReplicaState from v15), as Kafka's FetchRequest.isFromFollower.
func fetchFromFollower(req *kmsg.FetchRequest) bool {
	if req.Version >= 15 {
		return req.ReplicaState.ID >= 0
	}
	return req.ReplicaID >= 0
}
