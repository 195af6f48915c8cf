package main

import (
	"os"
	"slices"
	"strings"
	"testing"
)

func TestClusterNodeOverrides(t *testing.T) {
	nodes := []*sluiceClusterNode{{id: 1, port: 9001, ctrl: 9101}, {id: 2, port: 9002, ctrl: 9102}, {id: 3, port: 9003, ctrl: 9103}}
	args := clusterNodeOverrides(2, nodes, "/d/node-2")
	set := map[string]string{}
	for i := 0; i < len(args); i += 2 {
		if args[i] != "--override" {
			t.Fatalf("argument %d is %q, want --override", i, args[i])
		}
		k, v, ok := strings.Cut(args[i+1], "=")
		if !ok {
			t.Fatalf("override %q has no =", args[i+1])
		}
		set[k] = v
	}
	want := map[string]string{
		"node.id":                          "2",
		"process.roles":                    "broker,controller",
		"controller.quorum.voters":         "1@127.0.0.1:9101,2@127.0.0.1:9102,3@127.0.0.1:9103",
		"listeners":                        "PLAINTEXT://127.0.0.1:9002,CONTROLLER://127.0.0.1:9102",
		"advertised.listeners":             "PLAINTEXT://127.0.0.1:9002",
		"log.dirs":                         "/d/node-2",
		"offsets.topic.replication.factor": "3",
		"transaction.state.log.min.isr":    "2",
	}
	for k, v := range want {
		if set[k] != v {
			t.Errorf("%s = %q, want %q", k, set[k], v)
		}
	}
}

func TestParseNodes(t *testing.T) {
	for in, want := range map[string][]int{"1": {1}, "3": {3}, "1,3": {1, 3}, "3, 1,3": {3, 1}} {
		got, err := parseNodes(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("parseNodes(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "2", "1,x", "0"} {
		if _, err := parseNodes(in); err == nil {
			t.Errorf("parseNodes(%q) accepted", in)
		}
	}
}

func TestParseSystems(t *testing.T) {
	for in, want := range map[string][]system{"sluice,kafka": nil, "Sluice": {sysKafka}, "kafka": {sysSluice}} {
		got, err := parseSystems(in)
		if err != nil || len(got) != len(want) {
			t.Errorf("parseSystems(%q) = %v, %v; want skipped %v", in, got, err, want)
		}
		for _, sys := range want {
			if !got[sys] {
				t.Errorf("parseSystems(%q) runs %s", in, sys)
			}
		}
	}
	for _, in := range []string{"", "pulsar", "sluice,"} {
		if _, err := parseSystems(in); err == nil {
			t.Errorf("parseSystems(%q) accepted", in)
		}
	}
}

func TestParsePIDs(t *testing.T) {
	got, err := parsePIDs("101\n202\n303\n", 3)
	if err != nil || !slices.Equal(got, []int{101, 202, 303}) {
		t.Fatalf("got %v, %v", got, err)
	}
	for _, raw := range []string{"101\n202\n", "101\nx\n303\n", "101 -2 303"} {
		if _, err := parsePIDs(raw, 3); err == nil {
			t.Errorf("%q accepted for 3 nodes", raw)
		}
	}
}

func TestClusterRowsAreDistinct(t *testing.T) {
	single := produceSpec{AcksAll: true, Partitions: 16}
	cluster := produceSpec{AcksAll: true, Partitions: 16, Nodes: 3}
	if produceRow(single).Key == produceRow(cluster).Key || produceCPURow(single).Key == produceCPURow(cluster).Key {
		t.Fatal("a 3-node produce row shares its key with the single-broker row")
	}
	if produceRow(single).Key != "produce-acksall-p16" || single.label() != "acks=all, idempotent, 16 partitions" {
		t.Fatalf("single-broker row renamed: %q %q", produceRow(single).Key, single.label())
	}
	if !strings.Contains(cluster.label(), "3 nodes, RF=3, min.insync.replicas=2") {
		t.Fatalf("3-node label %q does not say how it is replicated", cluster.label())
	}
	if r := rowFill.onNodes(1); r != rowFill {
		t.Fatalf("onNodes(1) changed the row: %+v", r)
	}
	if r := rowFill.onNodes(3); r.Key == rowFill.Key || !strings.Contains(r.Label, "summed over the nodes") {
		t.Fatalf("onNodes(3): %+v", r)
	}
}

func TestSumCPUSecondsAddsProcesses(t *testing.T) {
	one, err := sumCPUSeconds([]int{os.Getpid()})
	if err != nil {
		t.Fatal(err)
	}
	two, err := sumCPUSeconds([]int{os.Getpid(), os.Getpid()})
	if err != nil {
		t.Fatal(err)
	}
	if two < 2*one {
		t.Fatalf("two of the same process %.2f s, one %.2f s", two, one)
	}
	if _, err := sumCPUSeconds([]int{os.Getpid(), 0}); err == nil {
		t.Fatal("a missing process was counted as zero")
	}
}
