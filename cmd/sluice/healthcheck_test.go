package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestDefaultHealthURL(t *testing.T) {
	for _, tc := range []struct {
		env, want string
		set       bool
	}{
		{want: "http://127.0.0.1:9644/readyz"},
		{set: true, env: " ", want: "http://127.0.0.1:9644/readyz"},
		{set: true, env: "0.0.0.0:9700", want: "http://127.0.0.1:9700/readyz"},
		{set: true, env: ":9701", want: "http://127.0.0.1:9701/readyz"},
		{set: true, env: "[::]:9702", want: "http://[::1]:9702/readyz"},
		{set: true, env: "10.1.2.3:9703", want: "http://10.1.2.3:9703/readyz"},
	} {
		got, err := defaultHealthURL(func(string) (string, bool) { return tc.env, tc.set })
		if err != nil || got != tc.want {
			t.Errorf("%s=%q: got %q, %v; want %q", metricsListenerEnv, tc.env, got, err, tc.want)
		}
	}
	if _, err := defaultHealthURL(func(string) (string, bool) { return "9644", true }); err == nil || !strings.Contains(err.Error(), metricsListenerEnv) {
		t.Errorf("a listener without a port: %v, want an error naming %s", err, metricsListenerEnv)
	}
}

func TestProbeHealth(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/readyz" {
			w.Write([]byte("ready\n"))
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte("controller: the metadata quorum has no leader\n"))
	}))
	defer srv.Close()
	var out bytes.Buffer
	if err := probeHealth(context.Background(), srv.URL+"/readyz", time.Second, &out); err != nil || out.String() != "ready\n" {
		t.Fatalf("ready node: %v, printed %q", err, out.String())
	}
	err := probeHealth(context.Background(), srv.URL+"/notready", time.Second, &out)
	if err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "no leader") {
		t.Fatalf("unready node: %v, want the status and the unmet condition", err)
	}

	// Nothing listening: a closed port fails at once, not after the timeout.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	if err := probeHealth(context.Background(), "http://"+addr+"/readyz", time.Second, &out); err == nil {
		t.Fatal("a probe of a closed port succeeded")
	}
}

func TestHealthcheckCommandExitsNonZeroWhenUnready(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "node: starting", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	root := newRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs([]string{"healthcheck", "--url", srv.URL + "/readyz"})
	if err := root.Execute(); err == nil || !strings.Contains(err.Error(), "node: starting") {
		t.Fatalf("healthcheck of an unready node: %v", err)
	}
}
