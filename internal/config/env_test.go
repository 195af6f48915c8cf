package config

import (
	"reflect"
	"testing"
)

func TestFromEnvMapsLikeKafkasImage(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want string // the key, "" when the variable sets none
	}{
		{"KAFKA_LOG_RETENTION_HOURS=5", "log.retention.hours"},
		{"KAFKA_LISTENERS=PLAINTEXT://:9092", "listeners"},
		{"KAFKA_NODE_ID=3", "node.id"},
		{"KAFKA_LISTENER_SECURITY_PROTOCOL_MAP=A:PLAINTEXT", "listener.security.protocol.map"},
		// a double underscore is an underscore, a triple one a dash
		{"KAFKA_LISTENER_NAME_SASL__SSL_SCRAM___SHA___256_SASL_JAAS_CONFIG=x", "listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config"},
		{"KAFKA_X____Y=1", "x-.y"}, // four: the image replaces "..." first, leftmost
		{"SLUICE_METRICS_LISTENER=127.0.0.1:9100", "sluice.metrics.listener"},
		{"SLUICE_DEBUG_LISTENER_BASIC_AUTH_USERS=a:b", "sluice.debug.listener.basic.auth.users"},
		// left out as Kafka's image leaves them out, and the JVM's and log4j's families
		{"KAFKA_HEAP_OPTS=-Xmx1G", ""},
		{"KAFKA_OPTS=-Dx=y", ""},
		{"KAFKA_VERSION=4.4.0", ""},
		{"KAFKA_JMX_PORT=9999", ""},
		{"KAFKA_JMX_HOSTNAME=h", ""},
		{"KAFKA_LOG4J_LOGGERS=kafka=DEBUG", ""},
		{"KAFKA_GC_LOG_OPTS=x", ""},
		// Kubernetes service links of services named kafka and sluice
		{"KAFKA_PORT=tcp://10.0.0.1:9092", ""},
		{"KAFKA_SERVICE_HOST=10.0.0.1", ""},
		{"SLUICE_SERVICE_PORT_KAFKA=9092", ""},
		{"SLUICE_PORT_9092_TCP_ADDR=10.0.0.1", ""},
		{"SLUICE_PORT_9092_TCP=tcp://10.0.0.1:9092", ""},
		// not ours, empty, or only the prefix
		{"KAFKA_NUM_PARTITIONS=", ""},
		{"KAFKA_=1", ""},
		{"SLUICE_=1", ""},
		{"HOME=/root", ""},
		{"kafka_num_partitions=3", ""},
		{"MY_KAFKA_NUM_PARTITIONS=3", ""},
	} {
		got := FromEnv([]string{tc.env})
		switch {
		case tc.want == "" && len(got) != 0:
			t.Errorf("%s: want no key, got %+v", tc.env, got)
		case tc.want != "" && (len(got) != 1 || got[0].Key != tc.want):
			t.Errorf("%s: want %s, got %+v", tc.env, tc.want, got)
		}
	}
}

func TestFromEnvKeepsValueAndVariableSorted(t *testing.T) {
	got := FromEnv([]string{"KAFKA_NUM_PARTITIONS=3", "KAFKA_LOG_DIRS=/var/lib/sluice=x", "PATH=/bin"})
	want := []EnvSetting{
		{Var: "KAFKA_LOG_DIRS", Key: "log.dirs", Value: "/var/lib/sluice=x"},
		{Var: "KAFKA_NUM_PARTITIONS", Key: "num.partitions", Value: "3"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

func TestFromEnvLog4jRootLevel(t *testing.T) {
	got := EnvOverrides(FromEnv([]string{"KAFKA_LOG4J_ROOT_LOGLEVEL=WARN"}))
	if got["sluice.log.level"] != "WARN" || len(got) != 1 {
		t.Fatalf("KAFKA_LOG4J_ROOT_LOGLEVEL alone: got %v", got)
	}
	got = EnvOverrides(FromEnv([]string{"KAFKA_LOG4J_ROOT_LOGLEVEL=WARN", "SLUICE_LOG_LEVEL=DEBUG"}))
	if got["sluice.log.level"] != "DEBUG" || len(got) != 1 {
		t.Fatalf("SLUICE_LOG_LEVEL must win over KAFKA_LOG4J_ROOT_LOGLEVEL: got %v", got)
	}
}

// The environment lies between the file and --override, which callers build by layering
// EnvOverrides under their overrides; Parse then sees the merged map.
func TestEnvLayerParses(t *testing.T) {
	env := EnvOverrides(FromEnv([]string{"KAFKA_NUM_PARTITIONS=7", "KAFKA_LOG_RETENTION_HOURS=5"}))
	env["num.partitions"] = "9" // as an --override would
	c, err := Parse("num.partitions=2\nlog.retention.hours=1\n", env)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Int(NumPartitions); got != 9 {
		t.Errorf("num.partitions = %d, want the override's 9", got)
	}
	if got := c.Int(LogRetentionHours); got != 5 {
		t.Errorf("log.retention.hours = %d, want the environment's 5", got)
	}
}
