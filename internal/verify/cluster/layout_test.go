package cluster

import (
	"os"
	"testing"
)

func TestPropertiesRouteNodesThroughTheProxyAndClientsDirect(t *testing.T) {
	members := []*member{
		{id: 1, client: "127.0.0.1:1001", controller: "127.0.0.1:1002", internal: "127.0.0.1:1003", metrics: "127.0.0.1:1004",
			proxyController: "127.0.0.1:2002", proxyInternal: "127.0.0.1:2003", logDir: "/d/node-1"},
		{id: 2, proxyController: "127.0.0.1:3002"},
	}
	props := properties(members, 0, map[string]string{
		"min.insync.replicas":          "2",
		"listeners":                    "PLAINTEXT://0.0.0.0:9092", // the wiring wins
		"offsets.topic.num.partitions": "3",
	})
	want := map[string]string{
		"node.id":                          "1",
		"process.roles":                    "broker,controller",
		"controller.quorum.voters":         "1@127.0.0.1:2002,2@127.0.0.1:3002",
		"listeners":                        "PLAINTEXT://127.0.0.1:1001,CONTROLLER://127.0.0.1:1002,INTERNAL://127.0.0.1:1003",
		"advertised.listeners":             "PLAINTEXT://127.0.0.1:1001,INTERNAL://127.0.0.1:2003",
		"inter.broker.listener.name":       "INTERNAL",
		"sluice.metrics.listener":          "127.0.0.1:1004",
		"log.dirs":                         "/d/node-1",
		"min.insync.replicas":              "2",
		"offsets.topic.num.partitions":     "3",
		"offsets.topic.replication.factor": "2",
		"transaction.state.log.min.isr":    "2",
	}
	for k, v := range want {
		if props[k] != v {
			t.Errorf("%s = %q, want %q", k, props[k], v)
		}
	}
}

func TestFaultBuildReadsTheBinarysTags(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if got := faultBuild(self); got != testFaultBuild {
		t.Errorf("the test binary counts as a fault build: %v, built with -tags sluicefault: %v", got, testFaultBuild)
	}
	if faultBuild("/nonexistent/sluice") {
		t.Error("a missing binary counts as a fault build")
	}
}
