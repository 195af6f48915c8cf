package quorum

import "time"

// Timing maps Kafka's quorum keys onto Raft ticks. Raft counts time in
// ticks of TickInterval:
//
//   - ElectionTick = ElectionTimeout / TickInterval. Raft randomizes each
//     follower's timeout in [ElectionTick, 2*ElectionTick), which plays the
//     part of Kafka's random election backoff: with the defaults (1000 ms,
//     100 ms ticks) an election starts 1 to 2 s after the leader went quiet.
//   - CheckQuorum: a leader that has not heard from a majority for one
//     election timeout steps down; that is Kafka's fetch timeout seen from
//     the leader's side.
//   - HeartbeatTick: the leader heartbeats often enough that a follower
//     hears from it several times per FetchTimeout and per ElectionTimeout:
//     min(ElectionTimeout, FetchTimeout) / 4, at least one tick.
//   - ElectionBackoffMax (controller.quorum.election.backoff.max.ms) is the
//     longest a candidate that lost waits before trying again. etcd Raft has
//     no separate backoff: its randomized timeout already spreads retries
//     over one election timeout, so the key is accepted and documented, not
//     applied (docs/quorum.md).
//
// PreVote is on, so a voter cut off and rejoining does not disrupt a leader.
type Timing struct {
	// TickInterval is one Raft tick (default 100 ms).
	TickInterval time.Duration
	// ElectionTimeout is controller.quorum.election.timeout.ms (default 1 s).
	ElectionTimeout time.Duration
	// FetchTimeout is controller.quorum.fetch.timeout.ms (default 2 s).
	FetchTimeout time.Duration
	// ElectionBackoffMax is controller.quorum.election.backoff.max.ms (default 1 s).
	ElectionBackoffMax time.Duration
}

// DefaultTiming is Kafka's defaults on 100 ms ticks.
func DefaultTiming() Timing {
	return Timing{TickInterval: 100 * time.Millisecond, ElectionTimeout: time.Second, FetchTimeout: 2 * time.Second, ElectionBackoffMax: time.Second}
}

func (t Timing) withDefaults() Timing {
	d := DefaultTiming()
	if t.TickInterval <= 0 {
		t.TickInterval = d.TickInterval
	}
	if t.ElectionTimeout <= 0 {
		t.ElectionTimeout = d.ElectionTimeout
	}
	if t.FetchTimeout <= 0 {
		t.FetchTimeout = d.FetchTimeout
	}
	if t.ElectionBackoffMax <= 0 {
		t.ElectionBackoffMax = d.ElectionBackoffMax
	}
	return t
}

// ElectionTicks is Raft's ElectionTick: at least 2 and above HeartbeatTicks.
func (t Timing) ElectionTicks() int {
	t = t.withDefaults()
	n := int(t.ElectionTimeout / t.TickInterval)
	return max(n, 2, t.HeartbeatTicks()+1)
}

// HeartbeatTicks is Raft's HeartbeatTick.
func (t Timing) HeartbeatTicks() int {
	t = t.withDefaults()
	return max(1, int(min(t.ElectionTimeout, t.FetchTimeout)/4/t.TickInterval))
}
