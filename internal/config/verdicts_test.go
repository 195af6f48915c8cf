package config

import "testing"

// TestValidationAgreesWithKafka replays Kafka's own accept/reject verdicts on sample values of
// every key (kafka_verdicts_gen_test.go, produced by running Kafka's parser and validators).
// Keys whose Kafka validator is custom logic Sluice checks elsewhere are skipped.
func TestValidationAgreesWithKafka(t *testing.T) {
	broker, topic := indexKeys(brokerKeyDefs()), indexKeys(topicKeyDefs())
	checked := 0
	for _, v := range kafkaVerdicts() {
		defs := broker
		if v.Topic {
			defs = topic
		}
		d, ok := defs[v.Key]
		if !ok {
			t.Errorf("verdict for %s, which the key table lacks", v.Key)
			continue
		}
		if checkedElsewhere(d) {
			continue
		}
		checked++
		err := validateValue(d, v.Value)
		if (err == nil) != v.Accept {
			t.Errorf("%s=%q: Kafka accept=%v, Sluice error=%v", v.Key, v.Value, v.Accept, err)
		}
	}
	if checked < 2000 {
		t.Fatalf("only %d verdicts compared", checked)
	}
}

// checkedElsewhere: the quorum lists are validated by Sluice's KRaft parsing, not per key.
func checkedElsewhere(d KeyDef) bool {
	for _, c := range d.Checks {
		if c.Kind == CheckKafkaOnly && c.Text == "non-empty list" {
			return true
		}
	}
	return false
}
