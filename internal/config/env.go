package config

import (
	"regexp"
	"slices"
	"strings"
)

// EnvSetting is a configuration key set by an environment variable (sluice server
// --config-env).
type EnvSetting struct {
	Var   string // the variable, e.g. KAFKA_LOG_RETENTION_HOURS
	Key   string // the key it sets, e.g. log.retention.hours
	Value string
}

// kafkaEnvExcluded are the KAFKA_* variables Kafka's image keeps out of server.properties
// (KafkaDockerWrapper's ExcludeServerPropsEnv): they configure the JVM, log4j or the image.
func kafkaEnvExcluded() []string {
	return []string{
		"KAFKA_VERSION", "KAFKA_HEAP_OPTS", "KAFKA_LOG4J_OPTS", "KAFKA_OPTS", "KAFKA_JMX_OPTS",
		"KAFKA_JVM_PERFORMANCE_OPTS", "KAFKA_GC_LOG_OPTS", "KAFKA_LOG4J_ROOT_LOGLEVEL",
		"KAFKA_LOG4J_LOGGERS", "KAFKA_TOOLS_LOG4J_LOGLEVEL", "KAFKA_JMX_HOSTNAME",
	}
}

// kubernetesServiceLink matches the variables Kubernetes injects for every service of the
// namespace (a service named kafka or sluice gives KAFKA_PORT=tcp://..., SLUICE_SERVICE_HOST,
// SLUICE_PORT_9092_TCP_ADDR...). No configuration key has these shapes.
var kubernetesServiceLink = regexp.MustCompile(`^[A-Z0-9_]+_(SERVICE_HOST|SERVICE_PORT(_[A-Z0-9_]+)?|PORT|PORT_[0-9]+_(TCP|UDP|SCTP)(_PROTO|_PORT|_ADDR)?)$`)

// FromEnv maps environment variables ("NAME=value", as os.Environ gives them) to
// configuration keys as Kafka's container image does: KAFKA_ is dropped, the rest is lower
// case, a single underscore becomes a dot, a double underscore an underscore and a triple
// underscore a dash (KAFKA_LOG_RETENTION_HOURS is log.retention.hours,
// KAFKA_LISTENER_NAME_SASL__SSL_SCRAM___SHA___256_SASL_JAAS_CONFIG is
// listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config). SLUICE_* variables set Sluice's own
// sluice.* keys the same way. Left out: the variables Kafka's image leaves out (JVM and log4j
// settings), every KAFKA_JMX_* and KAFKA_LOG4J_* variable, Kubernetes' service links and
// empty values. KAFKA_LOG4J_ROOT_LOGLEVEL, whose levels are Sluice's, sets sluice.log.level
// unless SLUICE_LOG_LEVEL does. The result is sorted by variable.
func FromEnv(environ []string) []EnvSetting {
	var out []EnvSetting
	var log4jLevel string
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || value == "" || kubernetesServiceLink.MatchString(name) {
			continue
		}
		if name == "KAFKA_LOG4J_ROOT_LOGLEVEL" {
			log4jLevel = value
		}
		if key, ok := envKey(name); ok {
			out = append(out, EnvSetting{Var: name, Key: key, Value: value})
		}
	}
	if log4jLevel != "" && !slices.ContainsFunc(out, func(s EnvSetting) bool { return s.Key == SluiceLogLevel.Name() }) {
		out = append(out, EnvSetting{Var: "KAFKA_LOG4J_ROOT_LOGLEVEL", Key: SluiceLogLevel.Name(), Value: log4jLevel})
	}
	slices.SortFunc(out, func(a, b EnvSetting) int { return strings.Compare(a.Var, b.Var) })
	return out
}

// envKey is the key a variable names, if it names one.
func envKey(name string) (string, bool) {
	if rest, ok := strings.CutPrefix(name, "SLUICE_"); ok && rest != "" {
		return "sluice." + envName(rest), true
	}
	rest, ok := strings.CutPrefix(name, "KAFKA_")
	if !ok || rest == "" || slices.Contains(kafkaEnvExcluded(), name) ||
		strings.HasPrefix(rest, "JMX_") || strings.HasPrefix(rest, "LOG4J_") {
		return "", false
	}
	return envName(rest), true
}

// envName applies the image's replacements in its order: "_" to ".", then "..." to "-",
// then ".." to "_".
func envName(s string) string {
	s = strings.ReplaceAll(strings.ToLower(s), "_", ".")
	s = strings.ReplaceAll(s, "...", "-")
	return strings.ReplaceAll(s, "..", "_")
}

// EnvOverrides is FromEnv as a key-value map, the layer between the file and --override.
func EnvOverrides(settings []EnvSetting) map[string]string {
	m := make(map[string]string, len(settings))
	for _, s := range settings {
		m[s.Key] = s.Value
	}
	return m
}
