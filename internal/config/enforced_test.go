package config

import (
	"maps"
	"slices"
	"testing"
)

// TestBrokerKeyNotesNameReadKeys keeps the notes annotations: a note on a key that no code
// reads would document behaviour that does not exist.
func TestBrokerKeyNotesNameReadKeys(t *testing.T) {
	for _, k := range slices.Sorted(maps.Keys(brokerKeyNotes())) {
		if ok, _ := EnforcedBrokerKey(k); !ok {
			t.Errorf("%s has a note but no non-test code reads it (rerun go run ./tools/configgen/keyuse, or drop the note)", k)
		}
	}
}

// TestKeysReadByCodeAreKeys rules out a generator that records names the key table lacks.
func TestKeysReadByCodeAreKeys(t *testing.T) {
	c := Defaults()
	topic := map[string]bool{}
	for _, d := range TopicKeys() {
		topic[d.Name] = true
	}
	for id := range keysReadByCode() {
		switch {
		case len(id) > 6 && id[:6] == "topic:":
			if !topic[id[6:]] {
				t.Errorf("%s is not a topic key", id)
			}
		case len(id) > 7 && id[:7] == "broker:":
			if _, ok := c.brokerDefs[id[7:]]; !ok && !slices.Contains(sluiceKeyNames(), id[7:]) {
				t.Errorf("%s is not a broker key", id)
			}
		default:
			t.Errorf("%s lacks its broker:/topic: prefix", id)
		}
	}
}

// TestEnforcedFollowsReads pins the rule on keys whose status is known: read directly, read
// as a topic key's synonym, read by name only, and read by nothing.
func TestEnforcedFollowsReads(t *testing.T) {
	for key, want := range map[string]bool{
		"message.max.bytes":               true, // the topic's max.message.bytes synonym
		"log.retention.hours":             true, // retention.ms's synonym
		"ssl.keystore.location":           true, // tlsconf reads it by name
		"unclean.leader.election.enable":  true, // the controller reads it by name
		"offsets.topic.compression.codec": false,
		"log.local.retention.ms":          false,
	} {
		if got, _ := EnforcedBrokerKey(key); got != want {
			t.Errorf("EnforcedBrokerKey(%s) = %v, want %v", key, got, want)
		}
	}
}
