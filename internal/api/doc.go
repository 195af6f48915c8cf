// Package api holds Sluice's request handlers, one file per Kafka API key
// (NN_name.go). Each file opens with the versions it serves and every
// deviation from Kafka, and contributes a constructor to the list in
// registry.go; the Registry built from them routes requests and computes the
// ApiVersions vector from the pinned Kafka release (kafka_versions.go).
//
// Adding an API: write NN_name.go with a func newXxxHandler(*Registry, Deps)
// (Handler, bool) returning {Key, MinVersion, MaxVersion, Handle} (false when
// Deps lacks what it needs), and add it to handlerConstructors in
// registry.go. The server needs no change.
package api
