package cli

import (
	"bufio"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestRecordFormat(t *testing.T) {
	r := &kgo.Record{
		Topic: "t", Partition: 2, Offset: 42, Key: []byte("k"), Value: []byte("v"),
		Headers:   []kgo.RecordHeader{{Key: "a", Value: []byte("1")}, {Key: "b", Value: []byte("2")}},
		Timestamp: time.UnixMilli(1700000000123),
	}
	f, err := parseRecordFormat(`%t/%p@%o %k=%v [%h] %T 100%%\n`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(f.append(nil, r)), "t/2@42 k=v [a=1,b=2] 1700000000123 100%\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	for _, bad := range []string{"%x", "abc%", `\q`} {
		if _, err := parseRecordFormat(bad); err == nil {
			t.Errorf("format %q accepted", bad)
		}
	}
	line, err := appendJSON(nil, &kgo.Record{Topic: "t", Value: []byte("v")})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"topic":"t","partition":0,"offset":0,"timestamp":-62135596800000,"key":null,"value":"v","headers":[]}` + "\n"; string(line) != want {
		t.Fatalf("json %s, want %s", line, want)
	}
}

func TestSplitOnDelimiter(t *testing.T) {
	for _, tc := range []struct {
		in, delim string
		want      []string
	}{
		{"a\nb\n", "\n", []string{"a", "b"}},
		{"a\nb", "\n", []string{"a", "b"}},
		{"a\n\nb\n", "\n", []string{"a", "", "b"}},
		{"a||b||c", "||", []string{"a", "b", "c"}},
		{"", "\n", nil},
	} {
		s := bufio.NewScanner(strings.NewReader(tc.in))
		s.Split(splitOn([]byte(tc.delim)))
		var got []string
		for s.Scan() {
			got = append(got, s.Text())
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
			t.Errorf("split %q on %q: %q, want %q", tc.in, tc.delim, got, tc.want)
		}
	}
}

func TestUnescape(t *testing.T) {
	for in, want := range map[string]string{`\n`: "\n", `\0`: "\x00", `a\tb`: "a\tb", `\\0`: `\0`, `:`: ":"} {
		got, err := unescape(in)
		if err != nil || got != want {
			t.Errorf("unescape(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{`\`, `\q`} {
		if _, err := unescape(bad); err == nil {
			t.Errorf("unescape(%q) accepted", bad)
		}
	}
}

func TestStartOffset(t *testing.T) {
	for _, tc := range []struct {
		offset      string
		first, end  int64
		want        int64
		wantUnknown bool
	}{
		{"start", 5, 10, 5, false},
		{"end", 5, 10, 10, false},
		{"7", 5, 10, 7, false},
		{"2", 5, 10, 5, false},
		{"-3", 5, 10, 7, false},
		{"-30", 5, 10, 5, false},
	} {
		o := &consumeOptions{offset: tc.offset}
		if _, err := o.startOffset(); err != nil {
			t.Fatalf("--offset %s: %v", tc.offset, err)
		}
		got, known := o.fixedStart(tc.first, tc.end)
		if !known || got != tc.want {
			t.Errorf("--offset %s over [%d,%d): %d (known %t), want %d", tc.offset, tc.first, tc.end, got, known, tc.want)
		}
	}
	if _, err := (&consumeOptions{offset: "soon"}).startOffset(); err == nil {
		t.Error("--offset soon accepted")
	}
	o := &consumeOptions{offset: "start", timestamp: "2026-11-30T10:00:00Z"}
	if _, err := o.startOffset(); err != nil {
		t.Fatal(err)
	}
	if _, known := o.fixedStart(0, 10); known {
		t.Error("a timestamp start is known without a lookup")
	}
	if _, err := (&consumeOptions{timestamp: "yesterday"}).startOffset(); err == nil {
		t.Error("--timestamp yesterday accepted")
	}
}

func TestKafkaErrorsAreNamedAndExplained(t *testing.T) {
	err := describe(kerr.UnknownTopicOrPartition)
	if got, want := err.Error(), "UNKNOWN_TOPIC_OR_PARTITION: "+kerr.UnknownTopicOrPartition.Description; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	err = serverError(kerr.InvalidConfig, "retention.ms must be a number")
	if !strings.Contains(err.Error(), "INVALID_CONFIG") || !strings.Contains(err.Error(), "(server: retention.ms must be a number)") {
		t.Fatalf("got %q", err)
	}
}

func TestEveryCommandHasHelpWithExamples(t *testing.T) {
	out := mustRunOffline(t, "completion", "bash")
	if !strings.Contains(out, "bash completion") {
		t.Fatalf("completion bash printed no completion script")
	}
	for _, args := range [][]string{
		{"topic", "create"}, {"topic", "list"}, {"topic", "describe"}, {"topic", "delete"}, {"topic", "alter-config"},
		{"cluster", "info"}, {"cluster", "config", "get"}, {"cluster", "config", "set"},
		{"produce"}, {"consume"}, {"bench", "produce"}, {"bench", "consume"},
	} {
		out := mustRunOffline(t, append(args, "--help")...)
		if !strings.Contains(out, "Examples:") || !strings.Contains(out, "--brokers") {
			t.Errorf("sluice %s --help has no examples or no --brokers:\n%s", strings.Join(args, " "), out)
		}
	}
}

func mustRunOffline(t *testing.T, args ...string) string {
	t.Helper()
	return mustRun(t, "", args...)
}

func TestMissingGroupAPIIsNamed(t *testing.T) {
	all := func(int16) bool { return true }
	if err := missingGroupAPI(1, all); err != nil {
		t.Fatalf("every key advertised: %v", err)
	}
	noCoordinator := func(key int16) bool { return key != 10 }
	err := missingGroupAPI(3, noCoordinator)
	want := "--group: broker 3 does not serve consumer groups (it does not advertise FindCoordinator, API key 10)"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
}

func TestSoftwareVersionFitsKafkasPattern(t *testing.T) {
	pattern := regexp.MustCompile(`^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$`)
	for in, want := range map[string]string{
		"0.2.0": "0.2.0", "0.2.0-dev": "0.2.0-dev", "0.2.0+abc.1": "0.2.0-abc.1",
		"v1.0.0-": "v1.0.0", "-x_y-": "x-y", "": "unknown", "+++": "unknown", "1.0é": "1.0",
	} {
		got := softwareVersion(in)
		if got != want || !pattern.MatchString(got) {
			t.Errorf("softwareVersion(%q) = %q, want %q matching Kafka's pattern", in, got, want)
		}
	}
}

func TestKafkaErrorPrefersTheServersReasonOverAMisleadingOne(t *testing.T) {
	got := serverError(kerr.InvalidPartitions, "cannot create more than 9999 partitions in one request").Error()
	if want := "INVALID_PARTITIONS: cannot create more than 9999 partitions in one request"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if got := serverError(kerr.InvalidPartitions, "").Error(); got != "INVALID_PARTITIONS: "+kerr.InvalidPartitions.Description {
		t.Fatalf("without a server message got %q", got)
	}
	got = serverError(kerr.TopicAlreadyExists, "Topic 'x' already exists.").Error()
	if want := "TOPIC_ALREADY_EXISTS: " + kerr.TopicAlreadyExists.Description + " (server: Topic 'x' already exists.)"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestShardErrorsNameTheBroker(t *testing.T) {
	se := &kadm.ShardErrors{Name: "IncrementalAlterConfigs", Errs: []kadm.ShardError{
		{Err: kerr.InvalidRequest, Broker: kadm.BrokerDetail{NodeID: 2}},
		{Err: errors.New("unknown broker"), Broker: kadm.BrokerDetail{NodeID: -1}},
	}}
	got := describe(se).Error()
	want := "broker 2: INVALID_REQUEST: " + kerr.InvalidRequest.Description + "; unknown broker"
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
