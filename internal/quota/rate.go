// Package quota enforces Kafka's client quotas (KIP-13, KIP-55, KIP-124,
// KIP-219, KIP-599): producer_byte_rate, consumer_byte_rate,
// request_percentage and controller_mutation_rate per user, client id and
// (user, client id), with defaults, read from the metadata image's client
// quota records. Its rates are Kafka's sampled windows (Rate over a
// WindowedSum, quota.window.num samples of quota.window.size.seconds), its
// throttle times QuotaUtils' formula, the controller mutation rate a token
// bucket; time comes from the caller (milliseconds) or an injected clock.
package quota

import "math"

// Config is a sensor's MetricConfig: Samples windows of WindowMs each
// (quota.window.num, quota.window.size.seconds).
type Config struct {
	Samples  int
	WindowMs int64
}

// DefaultConfig is Kafka's: 11 samples of one second.
func DefaultConfig() Config { return Config{Samples: 11, WindowMs: 1000} }

func (c Config) valid() Config {
	if c.Samples < 1 {
		c.Samples = 11
	}
	if c.WindowMs < 1 {
		c.WindowMs = 1000
	}
	return c
}

// sample is one window of a SampledStat.
type sample struct {
	value       float64
	eventCount  int64
	startTimeMs int64
	lastEventMs int64
}

func (s *sample) reset(now int64) { *s = sample{startTimeMs: now, lastEventMs: now} }

// Rate is Kafka's Rate over a WindowedSum, per second: the sum of the
// retained samples divided by the elapsed time, which counts at least
// Samples-1 whole windows so a new sensor does not report a burst as a huge
// rate. Not safe for concurrent use.
type Rate struct {
	samples []sample
	current int
}

// Record adds value at nowMs, as SampledStat.record.
func (r *Rate) Record(cfg Config, value float64, nowMs int64) {
	cfg = cfg.valid()
	s := r.currentSample(nowMs)
	if nowMs-s.startTimeMs >= cfg.WindowMs {
		s = r.advance(cfg, nowMs)
	}
	s.value += value
	s.eventCount++
	s.lastEventMs = nowMs
}

func (r *Rate) currentSample(nowMs int64) *sample {
	if len(r.samples) == 0 {
		r.samples = append(r.samples, sample{startTimeMs: nowMs, lastEventMs: nowMs})
	}
	return &r.samples[r.current]
}

// advance moves to the next sample; one more than Samples is kept, the
// "overlapping sample" of Kafka's purge.
func (r *Rate) advance(cfg Config, nowMs int64) *sample {
	r.current = (r.current + 1) % (cfg.Samples + 1)
	if r.current >= len(r.samples) {
		r.samples = append(r.samples, sample{startTimeMs: nowMs, lastEventMs: nowMs})
	} else {
		r.samples[r.current].reset(nowMs)
	}
	return &r.samples[r.current]
}

// purge resets samples with no event within the monitored window.
func (r *Rate) purge(cfg Config, nowMs int64) {
	expireAge := int64(cfg.Samples) * cfg.WindowMs
	for i := range r.samples {
		if nowMs-r.samples[i].lastEventMs >= expireAge {
			r.samples[i].reset(nowMs)
		}
	}
}

// WindowSize is Rate.windowSize: the milliseconds the rate divides by.
func (r *Rate) WindowSize(cfg Config, nowMs int64) int64 {
	cfg = cfg.valid()
	r.purge(cfg, nowMs)
	oldest := r.currentSample(nowMs).startTimeMs
	for _, s := range r.samples {
		oldest = min(oldest, s.startTimeMs)
	}
	elapsed := nowMs - oldest
	full := elapsed / cfg.WindowMs
	if minFull := int64(cfg.Samples - 1); full < minFull {
		elapsed += (minFull - full) * cfg.WindowMs
	}
	return max(elapsed, 1)
}

// Measure is the rate per second at nowMs.
func (r *Rate) Measure(cfg Config, nowMs int64) float64 {
	cfg = cfg.valid()
	r.purge(cfg, nowMs)
	var sum float64
	for _, s := range r.samples {
		sum += s.value
	}
	return sum / (float64(r.WindowSize(cfg, nowMs)) / 1000)
}

// LastEventMs is when the rate last recorded (for sensor expiry).
func (r *Rate) LastEventMs() int64 {
	var last int64 = math.MinInt64
	for _, s := range r.samples {
		last = max(last, s.lastEventMs)
	}
	return last
}

// ThrottleTime is QuotaUtils.throttleTime: the delay that brings the
// observed rate back to the bound if nothing more is recorded. With O the
// observed rate and T the bound over a window of W, O*W/(W+X) = T gives
// X = (O-T)/T*W, rounded to the millisecond.
func ThrottleTime(observed, bound float64, windowMs int64) int64 {
	if bound <= 0 {
		return 0
	}
	return int64(math.Round((observed - bound) / bound * float64(windowMs)))
}

// TokenBucket is Kafka's TokenBucket (KIP-599): tokens refill at the
// quota's rate up to a burst of Samples*Window*quota, and each record takes
// its value out; a negative balance is a violation. Not safe for
// concurrent use.
type TokenBucket struct {
	tokens       float64
	lastUpdateMs int64
}

func (b *TokenBucket) refill(cfg Config, bound float64, nowMs int64) float64 {
	burst := float64(cfg.Samples) * float64(cfg.WindowMs) / 1000 * bound
	b.tokens = min(burst, b.tokens+bound*float64(nowMs-b.lastUpdateMs)/1000)
	b.lastUpdateMs = nowMs
	return burst
}

// Measure is the tokens left at nowMs.
func (b *TokenBucket) Measure(cfg Config, bound float64, nowMs int64) float64 {
	b.refill(cfg.valid(), bound, nowMs)
	return b.tokens
}

// Record takes value tokens at nowMs (a negative value gives them back).
func (b *TokenBucket) Record(cfg Config, bound float64, value float64, nowMs int64) {
	burst := b.refill(cfg.valid(), bound, nowMs)
	b.tokens = min(burst, b.tokens-value)
}

// MutationThrottleTime is ControllerMutationQuotaManager.throttleTimeMs:
// the time for the bucket to refill to zero.
func MutationThrottleTime(tokens, bound float64) int64 {
	if bound <= 0 {
		return 0
	}
	return int64(math.Round(-tokens / bound * 1000))
}
