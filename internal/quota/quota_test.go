package quota

import (
	"errors"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/metadata"
)

// imageWith builds an image holding quotas (key, value) per entity.
func imageWith(t *testing.T, recs ...*metadata.ClientQuotaRecord) *metadata.Image {
	t.Helper()
	d := metadata.NewDelta(metadata.EmptyImage())
	for i, r := range recs {
		if err := d.Replay(int64(i), 1, r); err != nil {
			t.Fatal(err)
		}
	}
	return d.Apply()
}

func q(user, client *metadata.QuotaEntityName, key string, v float64) *metadata.ClientQuotaRecord {
	var e metadata.QuotaEntity
	if user != nil {
		e.User = *user
	}
	if client != nil {
		e.ClientID = *client
	}
	return &metadata.ClientQuotaRecord{Entity: e, Key: key, Value: v}
}

func name(s string) *metadata.QuotaEntityName { n := metadata.QuotaName(s); return &n }
func dflt() *metadata.QuotaEntityName         { n := metadata.QuotaDefault(); return &n }

func TestRateWindowSize(t *testing.T) {
	cfg := DefaultConfig()
	var r Rate
	steps := []struct {
		at     int64
		value  float64
		window int64
		rate   float64
	}{
		// A new sensor counts Samples-1 whole windows: 100 B over 10 s.
		{0, 100, 10000, 10},
		// Half a window later: 10.5 s.
		{500, 100, 10500, 200 / 10.5},
		// The next window: still 10 full windows counted from the first.
		{1000, 100, 10000, 30},
		// 10 s on: the first sample is 10 s old, 10 full windows.
		{10000, 0, 10000, 30},
		// At 12 s the samples of 0-1 s are 11 s old and reset: only the
		// empty one of 10 s is left.
		{12000, 0, 10000, 0},
	}
	for _, s := range steps {
		r.Record(cfg, s.value, s.at)
		if w := r.WindowSize(cfg, s.at); w != s.window {
			t.Fatalf("at %d: window %d, want %d", s.at, w, s.window)
		}
		if got := r.Measure(cfg, s.at); got < s.rate-1e-9 || got > s.rate+1e-9 {
			t.Fatalf("at %d: rate %v, want %v", s.at, got, s.rate)
		}
	}
}

func TestThrottleTimeFormula(t *testing.T) {
	for _, c := range []struct {
		observed, bound float64
		window          int64
		want            int64
	}{
		{600, 500, 10500, 2100},
		{1000, 500, 10000, 10000},
		{500.4, 500, 10000, 8},
		{500, 500, 10000, 0},
		{1, 0, 10000, 0},
	} {
		if got := ThrottleTime(c.observed, c.bound, c.window); got != c.want {
			t.Errorf("ThrottleTime(%v, %v, %d) = %d, want %d", c.observed, c.bound, c.window, got, c.want)
		}
	}
}

// TestQuotaViolation is Kafka's ClientQuotaManagerTest.testQuotaViolation:
// 400 B/s under a 500 B/s default quota, then a spike of 2300 B half a
// window later is throttled 2100 ms, until the spike rolls out.
func TestQuotaViolation(t *testing.T) {
	clk := clock.NewManual(time.UnixMilli(1_700_000_000_000))
	img := imageWith(t, q(dflt(), dflt(), metadata.QuotaProducerByteRate, 500))
	m := New(Options{Config: DefaultConfig(), Clock: clk, Images: func() *metadata.Image { return img }}).Produce
	for i := 0; i < 10; i++ {
		if ms := m.RecordAndGetThrottleTimeMs("ANONYMOUS", "unknown", 400); ms != 0 {
			t.Fatalf("record %d under the quota throttled %d ms", i, ms)
		}
		clk.Advance(time.Second)
	}
	clk.Advance(500 * time.Millisecond)
	if ms := m.RecordAndGetThrottleTimeMs("ANONYMOUS", "unknown", 2300); ms != 2100 {
		t.Fatalf("spike throttled %d ms, want 2100", ms)
	}
	clk.Advance(2100 * time.Millisecond)
	for i := 0; i < 10; i++ {
		m.RecordAndGetThrottleTimeMs("ANONYMOUS", "unknown", 400)
		clk.Advance(time.Second)
	}
	if ms := m.RecordAndGetThrottleTimeMs("ANONYMOUS", "unknown", 0); ms != 0 {
		t.Fatalf("throttled %d ms after the spike rolled over", ms)
	}
	// Other client ids have sensors of their own under the default.
	if ms := m.RecordAndGetThrottleTimeMs("ANONYMOUS", "other", 4000); ms != 0 {
		t.Fatalf("another client throttled %d ms", ms)
	}
}

func TestNoQuotaRecordsNothing(t *testing.T) {
	clk := clock.NewManual(time.UnixMilli(1_700_000_000_000))
	img := imageWith(t, q(nil, name("c"), metadata.QuotaConsumerByteRate, 1))
	ms := New(Options{Clock: clk, Images: func() *metadata.Image { return img }})
	if got := ms.Produce.RecordAndGetThrottleTimeMs("u", "c", 1e9); got != 0 {
		t.Fatalf("throttled %d ms with no produce quota", got)
	}
	if n := len(ms.Produce.sensors); n != 0 {
		t.Fatalf("%d sensors without any quota", n)
	}
	// A fetch quota for client c limits c only; others record unlimited.
	if got := ms.Fetch.RecordAndGetThrottleTimeMs("u", "d", 1e9); got != 0 {
		t.Fatalf("client d throttled %d ms", got)
	}
	if got := ms.Fetch.RecordAndGetThrottleTimeMs("u", "c", 1e3); got == 0 {
		t.Fatal("client c not throttled over its 1 B/s")
	}
	if got := ms.Fetch.MaxValueInQuotaWindow("u", "c"); got != 10 {
		t.Fatalf("max value in window %v, want 1*10*1", got)
	}
}

// TestResolutionPrecedence walks Kafka's order of the eight entity shapes:
// each step removes the most specific quota left.
func TestResolutionPrecedence(t *testing.T) {
	const k = metadata.QuotaProducerByteRate
	all := []*metadata.ClientQuotaRecord{
		q(name("u"), name("c"), k, 1),
		q(name("u"), dflt(), k, 2),
		q(name("u"), nil, k, 3),
		q(dflt(), name("c"), k, 4),
		q(dflt(), dflt(), k, 5),
		q(dflt(), nil, k, 6),
		q(nil, name("c"), k, 7),
		q(nil, dflt(), k, 8),
	}
	wantTags := []Tags{
		{"u", "c"}, {"u", "c"}, {"u", ""}, {"u", "c"}, {"u", "c"}, {"u", ""}, {"", "c"}, {"", "c"},
	}
	for i := range all {
		tbl := NewTable(imageWith(t, all[i:]...), Produce)
		tags, v, ok := tbl.Resolve("u", "c")
		if !ok || v != float64(i+1) || tags != wantTags[i] {
			t.Errorf("with quotas %d..8: tags %+v value %v ok %v, want %+v %d", i+1, tags, v, ok, wantTags[i], i+1)
		}
	}
	if _, _, ok := NewTable(imageWith(t), Produce).Resolve("u", "c"); ok {
		t.Error("a quota resolved from an empty image")
	}
	// Only one shape in use: the sensor keys on it alone (QuotaTypes).
	tbl := NewTable(imageWith(t, q(name("u"), nil, k, 9)), Produce)
	if tags, v, ok := tbl.Resolve("u", "c"); tags != (Tags{User: "u"}) || v != 9 || !ok {
		t.Errorf("user-only quotas: %+v %v %v", tags, v, ok)
	}
	if _, _, ok := tbl.Resolve("v", "c"); ok {
		t.Error("user v got user u's quota")
	}
	// ip entities are not client quotas; other keys are other kinds.
	img := imageWith(t, &metadata.ClientQuotaRecord{Entity: metadata.QuotaEntity{IP: metadata.QuotaDefault()}, Key: metadata.QuotaConnectionCreationRate, Value: 1},
		q(nil, dflt(), metadata.QuotaConsumerByteRate, 3))
	if NewTable(img, Produce).Enabled() || !NewTable(img, Fetch).Enabled() {
		t.Error("kinds mixed up")
	}
}

func TestQuotaChangesWithImage(t *testing.T) {
	clk := clock.NewManual(time.UnixMilli(1_700_000_000_000))
	img := imageWith(t)
	m := New(Options{Clock: clk, Images: func() *metadata.Image { return img }}).Produce
	if m.RecordAndGetThrottleTimeMs("u", "c", 1e6) != 0 {
		t.Fatal("throttled with no quota")
	}
	img = imageWith(t, q(nil, name("c"), metadata.QuotaProducerByteRate, 1000))
	if m.RecordAndGetThrottleTimeMs("u", "c", 1e6) == 0 {
		t.Fatal("not throttled once the image has a quota")
	}
	img = imageWith(t)
	if m.RecordAndGetThrottleTimeMs("u", "c", 1e6) != 0 {
		t.Fatal("throttled after the quota was removed")
	}
}

func TestRequestThrottleBoundedByWindow(t *testing.T) {
	clk := clock.NewManual(time.UnixMilli(1_700_000_000_000))
	img := imageWith(t, q(name("u"), nil, metadata.QuotaRequestPercentage, 1))
	m := New(Options{Config: DefaultConfig(), Clock: clk, Images: func() *metadata.Image { return img }}).Request
	if got := m.RecordAndGetThrottleTimeMs("u", "c", NanosToPercentage(int64(time.Second))); got != 1000 {
		t.Fatalf("request throttle %d ms, want the 1000 ms bound", got)
	}
}

// TestStrictMutationQuota is Kafka's StrictControllerMutationQuota test:
// quota 10/s, 10 windows (burst 100).
func TestStrictMutationQuota(t *testing.T) {
	clk := clock.NewManual(time.UnixMilli(1_700_000_000_000))
	img := imageWith(t, q(name("u"), name("c"), metadata.QuotaControllerMutationRate, 10))
	m := New(Options{ControllerConfig: Config{Samples: 10, WindowMs: 1000}, Clock: clk, Images: func() *metadata.Image { return img }}).ControllerMutation
	strict := m.NewMutationQuota("u", "c", true)
	for i := 0; i < 2; i++ {
		if err := strict.Record(90); err != nil || strict.Exceeded() || strict.ThrottleTimeMs() != 0 {
			t.Fatalf("record %d: %v exceeded %v throttle %d", i, err, strict.Exceeded(), strict.ThrottleTimeMs())
		}
	}
	var te *ThrottlingError
	if err := strict.Record(90); !errors.As(err, &te) || te.ThrottleTimeMs != 8000 {
		t.Fatalf("third record: %v", err)
	}
	if !strict.Exceeded() || strict.ThrottleTimeMs() != 8000 {
		t.Fatalf("exceeded %v throttle %d", strict.Exceeded(), strict.ThrottleTimeMs())
	}
	clk.Advance(5 * time.Second)
	if got := strict.ThrottleTimeMs(); got != 3000 {
		t.Fatalf("throttle after 5 s: %d, want 3000", got)
	}
	// Other clients of the same user have their own bucket.
	if err := m.NewMutationQuota("u", "d", true).Record(1000); err != nil {
		t.Fatalf("unlimited client: %v", err)
	}
}

func TestPermissiveMutationQuota(t *testing.T) {
	clk := clock.NewManual(time.UnixMilli(1_700_000_000_000))
	img := imageWith(t, q(name("u"), name("c"), metadata.QuotaControllerMutationRate, 10))
	m := New(Options{ControllerConfig: Config{Samples: 10, WindowMs: 1000}, Clock: clk, Images: func() *metadata.Image { return img }}).ControllerMutation
	p := m.NewMutationQuota("u", "c", false)
	for i, want := range []int64{0, 8000, 17000} {
		if err := p.Record(90); err != nil || p.Exceeded() || p.ThrottleTimeMs() != want {
			t.Fatalf("record %d: %v exceeded %v throttle %d, want %d", i, err, p.Exceeded(), p.ThrottleTimeMs(), want)
		}
	}
	clk.Advance(5 * time.Second)
	if got := p.ThrottleTimeMs(); got != 12000 {
		t.Fatalf("throttle after 5 s: %d, want 12000", got)
	}
	// A refund puts tokens back: 5 s refilled 50, -170+50+170 = 50.
	p.Refund(170)
	if err := m.NewMutationQuota("u", "c", true).Record(1); err != nil {
		t.Fatalf("after refund: %v", err)
	}
}

func TestSensorsExpire(t *testing.T) {
	clk := clock.NewManual(time.UnixMilli(1_700_000_000_000))
	img := imageWith(t, q(nil, dflt(), metadata.QuotaProducerByteRate, 1))
	m := New(Options{Clock: clk, Images: func() *metadata.Image { return img }}).Produce
	m.RecordAndGetThrottleTimeMs("u", "a", 1)
	clk.Advance(time.Hour)
	m.RecordAndGetThrottleTimeMs("u", "b", 1)
	if _, ok := m.sensors[Tags{ClientID: "a"}]; ok {
		t.Fatal("an hour-old sensor kept")
	}
}
