package latency

import (
	"testing"
	"time"
)

func TestBucketsBoundTheError(t *testing.T) {
	for _, us := range []uint64{0, 1, 127, 128, 129, 255, 256, 1000, 999_999, 1 << 40} {
		up := bucketUpper(bucketOf(us))
		if up < us {
			t.Fatalf("%d µs falls in a bucket ending at %d", us, up)
		}
		if us >= subBuckets && float64(up-us) > float64(us)/subBuckets {
			t.Fatalf("%d µs: bucket end %d is more than 1/%d off", us, up, subBuckets)
		}
		if us > 0 && bucketOf(us-1) > bucketOf(us) {
			t.Fatalf("buckets not monotonic at %d", us)
		}
	}
	for us := uint64(0); us < 1<<20; us += 37 {
		if i := bucketOf(us); bucketUpper(i) < us || (i > 0 && bucketUpper(i-1) >= us) {
			t.Fatalf("%d µs in bucket %d whose range ends at %d", us, i, bucketUpper(i))
		}
	}
}

func TestQuantilesSubMillisecond(t *testing.T) {
	var h Histogram
	// 1,000 samples of 1..1000 µs: p50 500 µs, p99 990 µs, p99.9 999 µs, max 1000 µs.
	for i := 1; i <= 1000; i++ {
		h.Record(time.Duration(i) * time.Microsecond)
	}
	check := func(q float64, want time.Duration) {
		t.Helper()
		got := h.Quantile(q)
		if got < want || float64(got-want) > float64(want)*Resolution+float64(time.Microsecond) {
			t.Errorf("quantile %v = %v, want %v within %v", q, got, want, Resolution)
		}
	}
	check(0.5, 500*time.Microsecond)
	check(0.99, 990*time.Microsecond)
	check(0.999, 999*time.Microsecond)
	if h.Max() != time.Millisecond || h.Quantile(1) != time.Millisecond {
		t.Fatalf("max %v, quantile(1) %v", h.Max(), h.Quantile(1))
	}
	var other Histogram
	other.Record(7 * time.Second)
	h.Merge(&other)
	if h.Count() != 1001 || h.Max() != 7*time.Second {
		t.Fatalf("after merge: count %d max %v", h.Count(), h.Max())
	}
	var empty Histogram
	if empty.Quantile(0.99) != 0 {
		t.Fatal("an empty histogram has no quantile")
	}
}
