package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The groups phase measures issue 17's benchmarks: how long a group takes to consume its
// whole topic again after one of its members leaves, under the consumer protocol (KIP-848)
// and the classic one, and what 1,000 idle consumer-protocol members cost the broker.
const (
	rebalancePartitions = 20
	rebalanceMembers    = 10
	hbGroups            = 100
	hbMembersPerGroup   = 10
	hbPartitions        = 10 // of the heartbeat phase's one topic: one partition per member
)

// groupVariant is one way of running the 10-member group: the protocol and the assignor.
type groupVariant struct {
	Key   string
	Label string
	// Consumer is the consumer protocol (KIP-848): kgo's ServerSideBalancer with
	// StickyBalancer first, which kgo maps to the server-side assignor "uniform".
	Consumer bool
	opts     func() []kgo.Opt
}

// groupVariants are the rows' group set-ups, in the order they run in a session.
var groupVariants = []groupVariant{
	{
		Key: "consumer", Consumer: true,
		Label: "consumer protocol (KIP-848), server-side assignor uniform",
		opts: func() []kgo.Opt {
			return []kgo.Opt{kgo.Balancers(kgo.StickyBalancer()), kgo.ServerSideBalancer()}
		},
	},
	{
		Key:   "classic-coop",
		Label: "classic protocol, cooperative-sticky (franz-go's default)",
		opts:  func() []kgo.Opt { return []kgo.Opt{kgo.Balancers(kgo.CooperativeStickyBalancer())} },
	},
	{
		Key:   "classic-eager",
		Label: "classic protocol, eager range (what the Java client's default list range,cooperative-sticky runs)",
		opts:  func() []kgo.Opt { return []kgo.Opt{kgo.Balancers(kgo.RangeBalancer())} },
	},
}

func rebalanceRow(v groupVariant) row {
	return row{
		Key: "rebalance-" + v.Key,
		Label: fmt.Sprintf("Rebalance after one of %d members leaves (kgo Close) until the %d left hold all %d partitions, each with a record of each of its partitions; %s",
			rebalanceMembers, rebalanceMembers-1, rebalancePartitions, v.Label),
		Unit: "ms", Format: "%.0f",
	}
}

func rebalanceAssignedRow(v groupVariant) row {
	return row{
		Key:   "rebalance-assigned-" + v.Key,
		Label: "... of which until the last partition assigned after the leave reached its member (OnPartitionsAssigned; informational); " + v.Label,
		Unit:  "ms", Format: "%.0f",
	}
}

var (
	rowHBBaseCPU = row{Key: "hb-cpu-idle", Label: "Broker CPU per second, idle, no group members (same session, just before they join)", Unit: "CPU ms/s", Format: "%.1f"}
	rowHBCPU     = row{Key: "hb-cpu", Label: fmt.Sprintf("Broker CPU per second, %d consumer-protocol members in %d groups, idle (no records), steady state", hbGroups*hbMembersPerGroup, hbGroups), Unit: "CPU ms/s", Format: "%.1f"}
	rowHBCPUOver = row{Key: "hb-cpu-members", Label: fmt.Sprintf("Broker CPU per second the %d members add (the row above less the idle row)", hbGroups*hbMembersPerGroup), Unit: "CPU ms/s", Format: "%.1f"}
	rowHBRate    = row{Key: "hb-rate", Label: "ConsumerGroupHeartbeat requests answered per second in the same window (informational)", Unit: "req/s", Format: "%.0f", HigherIsBetter: true}
	rowHBRSS     = row{Key: "hb-rss", Label: fmt.Sprintf("Broker RSS (VmRSS) at the end of the window with the %d members", hbGroups*hbMembersPerGroup), Unit: "MiB", Format: "%.0f"}
	rowHBRSSOver = row{Key: "hb-rss-members", Label: "Broker RSS growth from before the members joined to the end of the window", Unit: "MiB", Format: "%.0f"}
)

// leavesPerRound is how many leaves a session times per variant.
func (s *suite) leavesPerRound() int {
	if s.prof.Name == "full" {
		return 5
	}
	return 3
}

// groupsPhase runs, each round, a rebalance session then a heartbeat session on each
// system, Sluice first.
func (s *suite) groupsPhase(ctx context.Context) {
	for r := 1; r <= s.prof.Rounds && ctx.Err() == nil; r++ {
		for _, sys := range []system{sysSluice, sysKafka} {
			s.session(ctx, sys, r, "groups-rebalance", func(b broker) error { return s.rebalanceRuns(ctx, b, sys, r) })
		}
		for _, sys := range []system{sysSluice, sysKafka} {
			s.session(ctx, sys, r, "groups-heartbeat", func(b broker) error { return s.heartbeatRun(ctx, b, sys, r) })
		}
	}
	for _, n := range groupTargetNotes(s.res) {
		s.res.note("%s", n)
	}
}

// kip848Support says whether the broker lists ConsumerGroupHeartbeat v1 (what kgo and the
// raw members need) in ApiVersions, and if not, why, in words for the report.
func kip848Support(ctx context.Context, addr string) (bool, string) {
	resp, err := apiVersions(ctx, addr)
	if err != nil {
		return false, fmt.Sprintf("ApiVersions failed: %v", err)
	}
	for _, k := range resp.ApiKeys {
		if k.ApiKey == 68 {
			if k.MaxVersion >= 1 {
				return true, ""
			}
			return false, fmt.Sprintf("the broker does not support KIP-848: ApiVersions lists ConsumerGroupHeartbeat (key 68) only up to v%d, kgo needs v1", k.MaxVersion)
		}
	}
	return false, "the broker does not support KIP-848: ApiVersions lists no ConsumerGroupHeartbeat (key 68)"
}

// groupTargetNotes states issue 17's two rebalance targets from the medians, met or not.
func groupTargetNotes(res *results) []string {
	med := func(v string, sys system) (float64, bool) { return res.median("rebalance-"+v, sys) }
	sc, scOK := med("consumer", sysSluice)
	kc, kcOK := med("consumer", sysKafka)
	var out []string
	out = append(out, "Issue 17 target 1, Sluice's consumer protocol at most Kafka's (rebalance medians): "+
		targetText(sc, kc, scOK, kcOK, 1, "Sluice consumer", "Kafka consumer"))
	for _, classic := range []string{"classic-coop", "classic-eager"} {
		for _, sys := range []system{sysSluice, sysKafka} {
			cm, cOK := med(classic, sys)
			cons, consOK := sc, scOK
			if sys == sysKafka {
				cons, consOK = kc, kcOK
			}
			prefix := "Issue 17 target 2, Sluice's consumer protocol at most 0.25x the classic protocol's"
			limit := 0.25
			if sys == sysKafka {
				prefix, limit = "For comparison, Kafka's consumer protocol against its classic protocol", 0
			}
			out = append(out, fmt.Sprintf("%s (%s): %s", prefix, classic,
				targetText(cons, cm, consOK, cOK, limit, string(sys)+" consumer", string(sys)+" "+classic)))
		}
	}
	return out
}

// targetText formats "a / b = r (target <= limit: met|missed)"; limit 0 states no target.
func targetText(a, b float64, aok, bok bool, limit float64, aName, bName string) string {
	if !aok || !bok || b == 0 {
		var missing []string
		if !aok {
			missing = append(missing, aName)
		}
		if !bok {
			missing = append(missing, bName)
		}
		if len(missing) == 0 {
			missing = append(missing, bName+" is zero")
		}
		return "n/a, no value for " + strings.Join(missing, " and ") + " (see Failed runs)"
	}
	r := a / b
	out := fmt.Sprintf("%s %.0f ms / %s %.0f ms = %.2f", aName, a, bName, b, r)
	if limit <= 0 {
		return out
	}
	verdict := "met"
	if r > limit {
		verdict = "missed"
	}
	return fmt.Sprintf("%s (target at most %.2f: %s)", out, limit, verdict)
}

// renderGroupsMethod says how the groups rows were measured.
func renderGroupsMethod(b *strings.Builder) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format+"\n", args...) }
	p("- Groups rows (issue 17): single broker, each round a rebalance session and a heartbeat")
	p("  session per system, each on a fresh broker after the usual warm-up; the brokers' group")
	p("  settings are their defaults (Kafka: kafka-ref's, group.initial.rebalance.delay.ms=0).")
	p("  Clients are franz-go (the repository's kgo) in the suite's process.")
	p("- Rebalance: per variant, a new topic of %d partitions under a steady kgo producer (one", rebalancePartitions)
	p("  100-byte record to each partition every 10 ms, linger 5 ms, acks=1), and %d kgo group", rebalanceMembers)
	p("  members of a new group consuming it (fetch max wait 500 ms, the Java default; the")
	p("  client's default session timeout 45 s and classic heartbeat interval 3 s). Each member")
	p("  tracks its partitions with OnPartitionsAssigned/Revoked/Lost and the time it first")
	p("  polls a record of each after the mark. Once the %d cover the topic, and after a random", rebalanceMembers)
	p("  pause of 0-%s (so the leave meets the members' heartbeat timers at any phase: kgo's", leavePhaseSpread)
	p("  classic members heartbeat every 3 s and 500 ms after each rebalance), one member is")
	p("  closed (kgo Close: commit, then LeaveGroup, or the consumer protocol's leave heartbeat,")
	p("  epoch -1); the time runs from that call until the other %d hold all %d partitions, each", rebalanceMembers-1, rebalancePartitions)
	p("  partition held by exactly one of them and each member having polled a record of each of")
	p("  its partitions after the call (the latest of those polls ends the time); the row below")
	p("  it stops at the last OnPartitionsAssigned after the call, the protocol's share. Then a new")
	p("  member replaces it and the group settles again (not timed). 3 leaves per variant per")
	p("  round in the quick profile, 5 in the full. Consumer protocol: kgo ServerSideBalancer with")
	p("  StickyBalancer first (kgo then asks for the server assignor uniform); the suite checks")
	p("  with a write hook that no member sent JoinGroup (kgo silently falls back to the classic")
	p("  protocol when the broker refuses), and fails the row otherwise. Classic: kgo's")
	p("  cooperative-sticky, and eager range (the Java client's default list is range first).")
	p("- Heartbeat cost: one topic of %d partitions, no records; %d groups of %d members each", hbPartitions, hbGroups, hbMembersPerGroup)
	p("  subscribed to it (one partition per member), emulated with raw ConsumerGroupHeartbeat")
	p("  v1 requests from 4 kgo clients (one connection each to the coordinator, pipelined),")
	p("  not 1,000 kgo consumers: a member joins (epoch 0, a member id of its own, the topic,")
	p("  rebalance timeout 60 s), acknowledges each new assignment at once with a heartbeat")
	p("  carrying its owned partitions, and otherwise sends the light heartbeat (member id and")
	p("  epoch only) every %d ms from send to send on both brokers (Kafka's default", hbPeriodMs)
	p("  group.consumer.heartbeat.interval.ms; the notes give the interval each broker returned).")
	p("  Joins are spread over %d s.", hbJoinSpreadSecs)
	p("  Broker CPU is utime+stime from /proc/PID/stat over %d s: first with no members (the", hbWindowSecs)
	p("  idle row), then, once every group's members hold disjoint partitions covering the topic")
	p("  and no assignment has changed for one heartbeat period, over the next %d s with all", hbWindowSecs)
	p("  members heartbeating; RSS is VmRSS from /proc/PID/status at the end of each window.")
}
