// Package protocol is Kafka's wire framing: size-prefixed frames with a size
// limit, request headers (v1, and v2 with tagged fields for flexible request
// versions) and response headers (v0, and v1 for flexible response versions
// except ApiVersions, whose response header is always v0 so a client that
// does not yet know the broker's versions can still read it).
//
// Bodies are decoded and encoded by franz-go's kmsg; this package only knows
// the envelope around them.
package protocol
