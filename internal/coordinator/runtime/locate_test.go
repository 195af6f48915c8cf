package runtime

import "testing"

func TestPartitionForMatchesKafka(t *testing.T) {
	// Java: Math.abs("my-group".hashCode()) % 50 and friends, computed
	// with Java's String.hashCode.
	cases := []struct {
		group string
		want  int32
	}{
		{"", 0},
		{"a", 97 % 50},
		{"my-group", 12}, // hashCode -1906497762
		{"\U0001F600", absJava(31*0xD83D+0xDE00) % 50},
	}
	for _, c := range cases {
		if got := PartitionFor(c.group, 50); got != c.want {
			t.Errorf("PartitionFor(%q) = %d, want %d", c.group, got, c.want)
		}
	}
	// "polygenelubricants".hashCode() is Integer.MIN_VALUE: Kafka's abs maps
	// it to 0.
	if h := javaStringHash("polygenelubricants"); h != -1<<31 {
		t.Fatalf("hash = %d, want MIN_VALUE", h)
	}
	if got := PartitionFor("polygenelubricants", 50); got != 0 {
		t.Errorf("PartitionFor(MIN_VALUE hash) = %d, want 0", got)
	}
	if got := javaStringHash("my-group"); got != -1906497762 {
		t.Errorf("hash(my-group) = %d, want Java's -1906497762", got)
	}
}

func absJava(h int32) int32 {
	if h < 0 {
		return -h
	}
	return h
}
