package hostile

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/testbin"
	"github.com/sluice-io/sluice/internal/testutil"
)

// secrets are values a real server is started with that must never leave
// the process: password-type keys set with --override (Kafka's PASSWORD
// type), a key Kafka does not define (which DescribeConfigs must treat as
// possibly secret, as Kafka does) and a variable of the environment.
var secrets = map[string]string{
	"ssl.keystore.password":                     "hostile-secret-keystore-4b1e9c",
	"ssl.truststore.password":                   "hostile-secret-truststore-77d0a2",
	"sasl.jaas.config":                          "hostile-secret-jaas-0c5f31",
	"listener.name.plaintext.ssl.key.password":  "hostile-secret-listener-key-9e2b64",
	"hostile.custom.plugin.credential":          "hostile-secret-custom-3a8d17",
	"env SLUICE_HOSTILE_TEST_ENVIRONMENT_TOKEN": "hostile-secret-environment-5f60c8",
}

// secretEnv is the environment variable of secrets, set for the server.
const secretEnv = "SLUICE_HOSTILE_TEST_ENVIRONMENT_TOKEN"

// TestSecretsNeverLeaveTheProcess starts a server with secrets on its
// command line and in its environment, and reads everything its debug
// listener serves (metrics, health, every pprof profile, the CPU profile
// and the execution trace) and DescribeConfigs for the broker and the
// cluster default: no secret appears anywhere, /debug/pprof/cmdline
// answers 404, and the password keys are described as Kafka describes them
// (sensitive, value null, synonyms' values null).
func TestSecretsNeverLeaveTheProcess(t *testing.T) {
	t.Setenv(secretEnv, secrets["env "+secretEnv])
	overrides := []string{"sluice.debug.listener=127.0.0.1:0"}
	for k, v := range secrets {
		if !strings.HasPrefix(k, "env ") {
			overrides = append(overrides, k+"="+v)
		}
	}
	srv := testbin.StartServer(t, binaryPath, testbin.ServerConfig{DataDir: t.TempDir(), Overrides: overrides})
	base := "http://" + debugAddr(t, srv)

	if code, _ := httpGet(t, base+"/debug/pprof/cmdline"); code != http.StatusNotFound {
		t.Errorf("/debug/pprof/cmdline answered %d, want 404", code)
	}
	if code, _ := httpGet(t, base+"/debug/vars"); code != http.StatusNotFound {
		t.Errorf("/debug/vars (expvar, which publishes the command line) answered %d, want 404", code)
	}
	bodies := map[string][]byte{}
	for _, path := range []string{"/metrics", "/healthz", "/debug/pprof/", "/debug/pprof/symbol",
		"/debug/pprof/goroutine?debug=2", "/debug/pprof/trace?seconds=1"} {
		bodies[path] = mustGet(t, base+path)
	}
	for _, name := range profileNames(t, string(bodies["/debug/pprof/"])) {
		for _, debug := range []string{"0", "1"} {
			path := "/debug/pprof/" + name + "?debug=" + debug
			bodies[path] = gunzipIfGzip(mustGet(t, base+path))
		}
	}
	bodies["/debug/pprof/profile?seconds=1"] = gunzipIfGzip(mustGet(t, base+"/debug/pprof/profile?seconds=1"))
	for path, body := range bodies {
		assertNoSecret(t, path, body)
	}
	if !bytes.Contains(bodies["/metrics"], []byte("go_goroutines ")) {
		t.Errorf("/metrics lacks go_goroutines: the scan read the wrong thing")
	}

	for _, resource := range []string{"1", ""} {
		resp := describeBroker(t, srv.Addr(), resource)
		assertNoSecret(t, fmt.Sprintf("DescribeConfigs BROKER %q", resource), resp.AppendTo(nil))
		if resource == "1" {
			assertDescribedSensitive(t, resp)
		}
	}
	assertNoSecret(t, "the server's log", []byte(srv.Logs()))
}

// debugAddr waits for the server's log line naming its debug listener.
func debugAddr(t *testing.T, srv *testbin.Server) string {
	t.Helper()
	pattern := regexp.MustCompile(`msg="console listening"[^\n]*? address=(\S+)`)
	var addr string
	testutil.Eventually(t, 10*time.Second, func() bool {
		if m := pattern.FindStringSubmatch(srv.Logs()); m != nil {
			addr = m[1]
		}
		return addr != ""
	}, "the server never logged its debug listener's address")
	return addr
}

// profileNames are the profiles the pprof index links.
func profileNames(t *testing.T, index string) []string {
	t.Helper()
	var names []string
	for _, m := range regexp.MustCompile(`>([a-z]+)</a>`).FindAllStringSubmatch(index, -1) {
		switch m[1] {
		case "profile", "trace", "symbol": // fetched on their own, with their own parameters
		default:
			names = append(names, m[1])
		}
	}
	if len(names) < 5 {
		t.Fatalf("the pprof index lists %v", names)
	}
	return names
}

func httpGet(t *testing.T, url string) (int, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode, body
}

func mustGet(t *testing.T, url string) []byte {
	t.Helper()
	code, body := httpGet(t, url)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %.200q", url, code, body)
	}
	return body
}

// gunzipIfGzip opens a gzipped profile so its strings can be searched.
func gunzipIfGzip(b []byte) []byte {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return b
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		return b
	}
	return out
}

func assertNoSecret(t *testing.T, where string, body []byte) {
	t.Helper()
	for key, secret := range secrets {
		if bytes.Contains(body, []byte(secret)) {
			t.Errorf("%s holds the secret of %s", where, key)
		}
	}
}

// describeBroker asks DescribeConfigs for a broker resource with synonyms
// and documentation, every key.
func describeBroker(t *testing.T, addr, name string) *kmsg.DescribeConfigsResponse {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.IncludeSynonyms, req.IncludeDocumentation = true, true
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeBroker, name
	req.Resources = append(req.Resources, r)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("DescribeConfigs BROKER %q: %v", name, err)
	}
	if len(resp.Resources) != 1 || resp.Resources[0].ErrorCode != 0 {
		t.Fatalf("DescribeConfigs BROKER %q: %+v", name, resp.Resources)
	}
	return resp
}

// assertDescribedSensitive checks the secret keys' entries: each listed,
// sensitive, with a null value and null synonym values.
func assertDescribedSensitive(t *testing.T, resp *kmsg.DescribeConfigsResponse) {
	t.Helper()
	entries := map[string]kmsg.DescribeConfigsResponseResourceConfig{}
	for _, c := range resp.Resources[0].Configs {
		entries[c.Name] = c
	}
	for key := range secrets {
		if strings.HasPrefix(key, "env ") {
			continue
		}
		e, ok := entries[key]
		switch {
		case !ok:
			t.Errorf("DescribeConfigs does not list %s, set with --override", key)
		case !e.IsSensitive || e.Value != nil:
			t.Errorf("%s: sensitive %t, value %v; want sensitive with a null value", key, e.IsSensitive, e.Value)
		case len(e.ConfigSynonyms) == 0 || e.ConfigSynonyms[0].Source != kmsg.ConfigSourceStaticBrokerConfig:
			t.Errorf("%s: synonyms %+v, want the static value first", key, e.ConfigSynonyms)
		}
		for _, s := range e.ConfigSynonyms {
			if s.Value != nil {
				t.Errorf("%s: synonym %s shows a value", key, s.Name)
			}
		}
	}
}
