// Package api holds Sluice's request handlers, one file per Kafka API key
// (NN_name.go). Each file opens with the versions it serves and every
// deviation from Kafka, and holds the handler's constructor, which takes
// exactly the dependencies the handler needs (interfaces defined here:
// MetadataView, AdminController, BrokerControl, QuorumControl,
// MetadataLogServer, ProducerIDSource, LogDirSource, ControllerDirectory,
// DataPlane, GroupPlane). A key served differently on the two kinds of
// listener has one constructor per kind in its file.
//
// As in Kafka (KafkaApis and ControllerApis), there are two handler sets:
// BrokerHandlers over BrokerDeps for the broker listeners, advertising
// BrokerRelease, and ControllerHandlers over ControllerDeps for the
// CONTROLLER listeners, advertising ControllerListenerRelease. Each lists
// its handlers one a line and leaves out those whose dependency is nil.
// NewRegistry builds an immutable Registry from a release and a handler
// set, adds ApiVersions, routes requests and computes the ApiVersions
// vector from the pinned Kafka release (kafka_versions.go).
//
// Adding an API: write NN_name.go with its constructor and add one line to
// BrokerHandlers or ControllerHandlers (or both); a controller-only key
// also goes in controllerOnlyKeys. The server needs no change, and
// tools/compatgen reads both sets for docs/compatibility.md.
package api
