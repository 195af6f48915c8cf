package main

import (
	"strings"
	"testing"
)

// TestCommittedFilesMatch fails when keys_gen.go or its list is not what keygen writes from
// the committed key table.
func TestCommittedFilesMatch(t *testing.T) {
	if err := run("../../../internal/config", true); err != nil {
		t.Fatal(err)
	}
}

func TestGoName(t *testing.T) {
	for key, want := range map[string]string{
		"num.partitions":                        "NumPartitions",
		"sasl.oauthbearer.jwks.endpoint.url":    "SASLOAuthBearerJWKSEndpointURL",
		"broker.id":                             "BrokerID",
		"compression.lz4.level":                 "CompressionLZ4Level",
		"ssl.endpoint.identification.algorithm": "SSLEndpointIdentificationAlgorithm",
	} {
		if got := goName(key); got != want {
			t.Errorf("goName(%q) = %s, want %s", key, got, want)
		}
	}
}

func TestCollisionFails(t *testing.T) {
	broker := []keyDef{{Name: "a.b", Type: "TypeInt"}, {Name: "a_b", Type: "TypeLong"}}
	topic := []keyDef{{Name: "segment.ms", Type: "TypeLong"}}
	_, err := generate(broker, topic)
	if err == nil || !strings.Contains(err.Error(), "AB collides") {
		t.Fatalf("want a collision error, got %v", err)
	}
}

func TestTopicTypeWithoutKeyTypeFails(t *testing.T) {
	_, err := generate([]keyDef{{Name: "a", Type: "TypeInt"}}, []keyDef{{Name: "p", Type: "TypePassword"}})
	if err == nil || !strings.Contains(err.Error(), "no key type") {
		t.Fatalf("want an error for a topic password key, got %v", err)
	}
}

func TestBrokerAndTopicKeysDoNotCollide(t *testing.T) {
	files, err := generate([]keyDef{{Name: "min.insync.replicas", Type: "TypeInt"}},
		[]keyDef{{Name: "min.insync.replicas", Type: "TypeInt"}})
	if err != nil {
		t.Fatal(err)
	}
	src := string(files[keysFile])
	for _, want := range []string{`MinInsyncReplicas = IntKey{"min.insync.replicas"}`, `TopicMinInsyncReplicas = TopicIntKey{"min.insync.replicas"}`} {
		if !strings.Contains(src, want) {
			t.Errorf("generated source lacks %s:\n%s", want, src)
		}
	}
}
