package config

// Keys are typed values, not strings, so a misspelt key or a key read with the wrong getter
// (a topic key from the broker's Config, a long as a bool) fails to compile. Kafka's keys are
// generated from the key table into keys_gen.go (tools/configgen/keygen); Sluice's own keys
// are declared below. The name is unexported, so only this package makes keys.

// Key is a key of the broker's Config: one of Kafka's broker keys or one of Sluice's own.
// IsSet and Raw take any of them.
type Key interface {
	Name() string
	brokerKey()
}

// BoolKey is a boolean broker key.
type BoolKey struct{ name string }

// IntKey is an int or short broker key.
type IntKey struct{ name string }

// LongKey is a long broker key.
type LongKey struct{ name string }

// DoubleKey is a double broker key.
type DoubleKey struct{ name string }

// StringKey is a string broker key.
type StringKey struct{ name string }

// ListKey is a list broker key.
type ListKey struct{ name string }

// ClassKey is a class broker key (a Java class name; Sluice loads none).
type ClassKey struct{ name string }

// PasswordKey is a password broker key: its value is secret.
type PasswordKey struct{ name string }

// SluiceKey is a key of Sluice's own, which Kafka does not define: it has no type or
// default, and is read with Raw and IsSet.
type SluiceKey struct{ name string }

// SluiceDebugListener is the address of the debug HTTP listener (/metrics, /healthz, /readyz,
// pprof).
// Unset, nothing is bound.
var SluiceDebugListener = SluiceKey{"sluice.debug.listener"}

// SluiceDebugListenerUsers are the debug listener's users, "name:bcrypt-hash,..." (HTTP
// basic authentication on every endpoint but /healthz and /readyz). Required when any
// listener is secured (SSL, SASL) and the debug listener is not on a loopback address.
var SluiceDebugListenerUsers = SluiceKey{"sluice.debug.listener.basic.auth.users"}

// SluiceMetricsListener is the address of the metrics HTTP listener (/metrics, /healthz,
// /readyz; no pprof). Unset, nothing is bound. It may name the same address as the debug
// listener: the two then share one HTTP server.
var SluiceMetricsListener = SluiceKey{"sluice.metrics.listener"}

// SluiceMetricsListenerUsers are the metrics listener's users, "name:bcrypt-hash,..." (HTTP
// basic authentication on /metrics; the probes stay open). Required when any listener is
// secured (SSL, SASL) and the metrics listener is not on a loopback address.
var SluiceMetricsListenerUsers = SluiceKey{"sluice.metrics.listener.basic.auth.users"}

// SluiceLogFormat is the log format, text or json (sluice server --log-format). Unset, text.
var SluiceLogFormat = SluiceKey{"sluice.log.format"}

// SluiceLogLevel is the root logger's level at start, TRACE, DEBUG, INFO, WARN, ERROR or FATAL
// (sluice server --log-level); it can change at run time through the BROKER_LOGGER resource.
// Unset, INFO.
var SluiceLogLevel = SluiceKey{"sluice.log.level"}

// SluiceDecompressionMaxInflightBytes bounds the decompressed bytes of record batches held at
// once across all requests and readers (Produce validation, ListOffsets by timestamp, the
// cleaner); a batch over it waits. Unset, records.DefaultDecompressionBudget (512 MiB).
var SluiceDecompressionMaxInflightBytes = SluiceKey{"sluice.decompression.max.inflight.bytes"}

// SluiceQueuedMaxRequestBytes caps the bytes of request buffers in flight per server when
// Kafka's queued.max.request.bytes keeps its default (-1, unbounded); -1 disables the cap.
// Unset, server.DefaultRequestMemoryBudget.
var SluiceQueuedMaxRequestBytes = SluiceKey{"sluice.queued.max.request.bytes"}

// SluiceConsoleListener is the address of the web console (an HTTP listener serving the
// console at "/"). Unset, no console. It may name the address of sluice.metrics.listener or
// sluice.debug.listener: they then share one HTTP server. Loopback is recommended.
var SluiceConsoleListener = SluiceKey{"sluice.console.listener"}

// SluiceConsoleReadOnly, true, makes the web console refuse every write (creating, deleting
// and altering topics, producing, resetting offsets). Unset, false.
var SluiceConsoleReadOnly = SluiceKey{"sluice.console.read.only"}

// SluiceBalancerAutoEnable, true, makes the active controller execute the balancing plan it
// computes when a broker registers or unregisters (as reassignments). Unset, false: the plan
// is only logged.
var SluiceBalancerAutoEnable = SluiceKey{"sluice.balancer.auto.enable"}

// sluiceKeyNames are Sluice's own keys above, the ones a start-up check knows (CheckKeys);
// TestSluiceKeyNamesListsEveryKey keeps the list whole.
func sluiceKeyNames() []string {
	return []string{
		SluiceDebugListener.name, SluiceDebugListenerUsers.name, SluiceMetricsListener.name,
		SluiceMetricsListenerUsers.name, SluiceLogFormat.name, SluiceLogLevel.name,
		SluiceDecompressionMaxInflightBytes.name, SluiceQueuedMaxRequestBytes.name,
		SluiceConsoleListener.name, SluiceConsoleReadOnly.name, SluiceBalancerAutoEnable.name,
	}
}

// Name returns the key as written in server.properties.
func (k BoolKey) Name() string { return k.name }

// Name returns the key as written in server.properties.
func (k IntKey) Name() string { return k.name }

// Name returns the key as written in server.properties.
func (k LongKey) Name() string { return k.name }

// Name returns the key as written in server.properties.
func (k DoubleKey) Name() string { return k.name }

// Name returns the key as written in server.properties.
func (k StringKey) Name() string { return k.name }

// Name returns the key as written in server.properties.
func (k ListKey) Name() string { return k.name }

// Name returns the key as written in server.properties.
func (k ClassKey) Name() string { return k.name }

// Name returns the key as written in server.properties.
func (k PasswordKey) Name() string { return k.name }

// Name returns the key as written in server.properties.
func (k SluiceKey) Name() string { return k.name }

func (BoolKey) brokerKey()     {}
func (IntKey) brokerKey()      {}
func (LongKey) brokerKey()     {}
func (DoubleKey) brokerKey()   {}
func (StringKey) brokerKey()   {}
func (ListKey) brokerKey()     {}
func (ClassKey) brokerKey()    {}
func (PasswordKey) brokerKey() {}
func (SluiceKey) brokerKey()   {}

// TopicBoolKey is a boolean topic key.
type TopicBoolKey struct{ name string }

// TopicIntKey is an int or short topic key.
type TopicIntKey struct{ name string }

// TopicLongKey is a long topic key.
type TopicLongKey struct{ name string }

// TopicDoubleKey is a double topic key.
type TopicDoubleKey struct{ name string }

// TopicStringKey is a string topic key.
type TopicStringKey struct{ name string }

// TopicListKey is a list topic key.
type TopicListKey struct{ name string }

// Name returns the key as written in a topic's configs.
func (k TopicBoolKey) Name() string { return k.name }

// Name returns the key as written in a topic's configs.
func (k TopicIntKey) Name() string { return k.name }

// Name returns the key as written in a topic's configs.
func (k TopicLongKey) Name() string { return k.name }

// Name returns the key as written in a topic's configs.
func (k TopicDoubleKey) Name() string { return k.name }

// Name returns the key as written in a topic's configs.
func (k TopicStringKey) Name() string { return k.name }

// Name returns the key as written in a topic's configs.
func (k TopicListKey) Name() string { return k.name }
