package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// summary is what the test found; verdict turns it into pass or fail.
type summary struct {
	versions       versions
	rolls          []rollTime
	featuresBefore []string
	featuresAfter  []string
	running        []string

	sent, acked  int64
	failed       map[string]int
	prodTally    *errTally
	consTally    *errTally
	consMissing  int
	consDupes    int
	consBad      []string
	logRecords   int
	audit        auditResult
	shutdownTime time.Duration
}

// finish stops the producer (every outstanding record settled), lets the
// consumer read the rest, reads the whole topic back and stops the nodes
// cleanly with the new binary.
func (c *cluster) finish(ctx context.Context, s *summary) error {
	s.prodTally, s.consTally = c.prod.tally, c.cons.tally
	c.stopProd()
	<-c.prodDone
	c.prod.mu.Lock()
	s.sent, s.acked, s.failed = c.prod.sent, int64(len(c.prod.acked)), c.prod.failed
	acked := c.prod.acked
	c.prod.mu.Unlock()
	_ = waitFor(ctx, 60*time.Second, "consumer read every acknowledged record", func(context.Context) error {
		if m := c.cons.missing(acked); m > 0 {
			return fmt.Errorf("%d not read yet", m)
		}
		return nil
	})
	c.stopCons()
	<-c.consDone
	s.consMissing = c.cons.missing(acked)
	for _, n := range c.cons.seen {
		if n > 1 {
			s.consDupes++
		}
	}
	s.consBad = c.cons.bad
	rctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	log, err := readAll(rctx, c.seeds(), c.o.topic)
	if err != nil {
		return err
	}
	s.logRecords, s.audit = len(log), audit(acked, log)
	return c.stopAll(s)
}

// stopAll stops every node with SIGTERM; each must exit 0.
func (c *cluster) stopAll(s *summary) error {
	t := time.Now()
	var errs []error
	for _, n := range slices.Backward(c.nodes) {
		errs = append(errs, n.stop(60*time.Second))
	}
	s.shutdownTime = time.Since(t)
	return errors.Join(errs...)
}

func (s *summary) print(w io.Writer) {
	fmt.Fprintln(w, "\n== rolling upgrade summary")
	fmt.Fprintf(w, "from: %s\nto:   %s\n", s.versions.old, s.versions.new)
	for _, r := range s.rolls {
		fmt.Fprintf(w, "node %d: SIGTERM to exit %s, new binary start to ready %s, ready to in every ISR and quorum %s; total %s\n",
			r.id, r.stop.Round(time.Millisecond), r.start.Round(time.Millisecond), r.catchUp.Round(time.Millisecond),
			(r.stop + r.start + r.catchUp).Round(time.Millisecond))
	}
	fmt.Fprintf(w, "finalized features before: %s\n", strings.Join(s.featuresBefore, " "))
	fmt.Fprintf(w, "finalized features after:  %s\n", strings.Join(s.featuresAfter, " "))
	for _, r := range s.running {
		fmt.Fprintln(w, r)
	}
	fmt.Fprintf(w, "producer: %d records sent, %d acknowledged, %d failed %v\n", s.sent, s.acked, s.sent-s.acked, s.failed)
	s.prodTally.print(w)
	fmt.Fprintf(w, "consumer (group upgrade-test): %d acknowledged records not read, %d read more than once (rebalances), %d not the producer's\n",
		s.consMissing, s.consDupes, len(s.consBad))
	s.consTally.print(w)
	fmt.Fprintf(w, "topic read back: %d records; %s\n", s.logRecords, s.audit)
	fmt.Fprintf(w, "clean stop of the upgraded cluster: %s\n", s.shutdownTime.Round(time.Millisecond))
}

// verdict fails on any broken expectation, naming each.
func (s *summary) verdict() error {
	var bad []string
	if len(s.failed) > 0 || s.sent != s.acked {
		bad = append(bad, fmt.Sprintf("%d produced records were not acknowledged: %v", s.sent-s.acked, s.failed))
	}
	if nr := s.prodTally.nonRetriable(); len(nr) > 0 {
		bad = append(bad, "the producer met non-retriable errors: "+strings.Join(nr, ", "))
	}
	if s.acked == 0 {
		bad = append(bad, "nothing was acknowledged")
	}
	if s.consMissing > 0 || len(s.consBad) > 0 {
		bad = append(bad, fmt.Sprintf("the consumer missed %d acknowledged records and read %d foreign ones %v",
			s.consMissing, len(s.consBad), first(s.consBad, 3)))
	}
	if !s.audit.clean() {
		bad = append(bad, "the topic does not hold every acknowledged record exactly once: "+s.audit.String())
	}
	if !slices.Equal(comparableFeatures(s.featuresBefore), comparableFeatures(s.featuresAfter)) {
		bad = append(bad, "the finalized features changed across the upgrade")
	}
	if len(bad) > 0 {
		return errors.New(strings.Join(bad, "\n  "))
	}
	return nil
}

// comparableFeatures leaves out the two levels whose reporting changed in
// 0.2.0 without any stored level changing: v0.1.0 reported kraft.version 1
// on a static quorum and eligible.leader.replicas.version 1, though it served
// neither (no KIP-853 voter changes, no ELR); 0.2.0 reports them as Kafka
// does, kraft.version 0 (not listed) on a static quorum and ELR at most 0.
// And share.version, which v0.1.0 does not know: rolled back to it, a
// cluster formatted by 0.2.0 keeps the level's record, but v0.1.0 serves no
// share groups and does not report it. Every other finalized level must
// survive an upgrade and a rollback.
func comparableFeatures(fs []string) []string {
	return slices.DeleteFunc(slices.Clone(fs), func(f string) bool {
		return strings.HasPrefix(f, "kraft.version=") || strings.HasPrefix(f, "eligible.leader.replicas.version=") ||
			strings.HasPrefix(f, "share.version=")
	})
}
