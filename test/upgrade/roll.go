package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"time"
)

// versions are what the two binaries print for `sluice version`.
type versions struct {
	old, new string
	semver   string // the new binary's semantic version, "" if it prints none
}

var semverRE = regexp.MustCompile(`\b\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?\b`)

func binaryVersions(oldBin, newBin string) (versions, error) {
	var v versions
	for _, b := range []struct {
		bin string
		out *string
	}{{oldBin, &v.old}, {newBin, &v.new}} {
		out, err := exec.Command(b.bin, "version").Output()
		if err != nil {
			return v, fmt.Errorf("%s version: %w", b.bin, err)
		}
		*b.out = strings.TrimSpace(string(out))
	}
	fmt.Printf("old binary: %s\nnew binary: %s\n", v.old, v.new)
	if v.old == v.new {
		return v, fmt.Errorf("the old and new binaries report the same version %q", v.old)
	}
	// The Kafka release named after the protocol is not ours.
	first, _, _ := strings.Cut(v.new, "Kafka")
	v.semver = semverRE.FindString(first)
	return v, nil
}

// rollTime is how long each phase of one node's upgrade took.
type rollTime struct {
	id                    int32
	stop, start, catchUp  time.Duration
	ackedBefore, ackedAft int
}

// runUpgrade moves each node in turn from the old binary to the new one,
// then stops the traffic and audits what was acknowledged.
func (c *cluster) runUpgrade(ctx context.Context, v versions) (*summary, error) {
	s := &summary{versions: v}
	var err error
	if s.featuresBefore, err = c.features(ctx); err != nil {
		return nil, err
	}
	for _, n := range c.nodes {
		rt, err := c.roll(ctx, n)
		if err != nil {
			return nil, err
		}
		s.rolls = append(s.rolls, rt)
	}
	if s.featuresAfter, err = c.features(ctx); err != nil {
		return nil, err
	}
	if s.running, err = c.checkRunningVersions(ctx, v); err != nil {
		return nil, err
	}
	// A summary from here on, even when finish fails part-way.
	return s, c.finish(ctx, s)
}

// roll stops node n with SIGTERM, starts it with the new binary on the same
// data dir and config, and waits until it is back in every ISR it belongs to
// and caught up in the quorum, then for the producer to go on.
func (c *cluster) roll(ctx context.Context, n *node) (rollTime, error) {
	rt := rollTime{id: n.id, ackedBefore: c.prod.ackedCount()}
	snaps, err := n.metadataSnapshots()
	if err != nil {
		return rt, err
	}
	if len(snaps) == 0 {
		return rt, fmt.Errorf("node %d has no metadata snapshot for the new binary to load", n.id)
	}
	fmt.Printf("node %d: SIGTERM (pid %d, %s; metadata snapshot %s)\n", n.id, n.pid(), n.bin, snaps[len(snaps)-1])
	t := time.Now()
	if err := n.stop(60 * time.Second); err != nil {
		return rt, err
	}
	rt.stop = time.Since(t)
	t = time.Now()
	if err := n.launch(c.o.newBin); err != nil {
		return rt, err
	}
	if err := n.waitReady(ctx); err != nil {
		return rt, err
	}
	rt.start = time.Since(t)
	t = time.Now()
	if err := waitFor(ctx, 90*time.Second, fmt.Sprintf("node %d back in every ISR", n.id), inAllISRs(c.admin, c.nodes, n.id)); err != nil {
		return rt, err
	}
	if err := waitFor(ctx, 30*time.Second, fmt.Sprintf("voter %d caught up", n.id), voterCaughtUp(c.admin, n.id)); err != nil {
		return rt, err
	}
	rt.catchUp = time.Since(t)
	rt.ackedAft = c.prod.ackedCount()
	fmt.Printf("node %d: stopped in %s, new binary ready in %s, in every ISR and caught up in the quorum %s later (%d records acknowledged meanwhile)\n",
		n.id, rt.stop.Round(time.Millisecond), rt.start.Round(time.Millisecond), rt.catchUp.Round(time.Millisecond), rt.ackedAft-rt.ackedBefore)
	// The next node goes only once the producer has been acknowledged again.
	return rt, c.waitProgress(ctx, 100)
}

// features reads each node's finalized feature levels; all must agree.
func (c *cluster) features(ctx context.Context) ([]string, error) {
	var want []string
	for _, n := range c.nodes {
		f, err := finalizedFeatures(ctx, c.admin, n.id)
		if err != nil {
			return nil, err
		}
		if want != nil && !slices.Equal(f, want) {
			return nil, fmt.Errorf("node %d finalizes %v, node 1 %v", n.id, f, want)
		}
		want = f
	}
	return want, nil
}

// checkRunningVersions checks that each process runs the new binary and,
// where the node exports sluice_build_info, that it names the new version.
func (c *cluster) checkRunningVersions(ctx context.Context, v versions) ([]string, error) {
	var out []string
	for _, n := range c.nodes {
		exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", n.pid()))
		if err != nil {
			return nil, fmt.Errorf("node %d: %w", n.id, err)
		}
		if exe != c.o.newBin {
			return nil, fmt.Errorf("node %d runs %s, not the new binary %s", n.id, exe, c.o.newBin)
		}
		info, err := buildInfo(ctx, n)
		if err != nil {
			return nil, err
		}
		line := fmt.Sprintf("node %d: pid %d runs %s", n.id, n.pid(), exe)
		switch {
		case info == "":
			line += "; /metrics has no sluice_build_info (not checked)"
		case v.semver != "" && !strings.Contains(info, `"`+v.semver+`"`):
			return nil, fmt.Errorf("node %d's %s does not name version %s", n.id, info, v.semver)
		default:
			line += "; " + info
		}
		out = append(out, line)
	}
	return out, nil
}

// buildInfo returns the node's sluice_build_info series, "" when it has none.
func buildInfo(ctx context.Context, n *node) (string, error) {
	status, body, err := httpGet(ctx, "http://"+n.metrics()+"/metrics")
	if err != nil || status != 200 {
		return "", fmt.Errorf("node %d /metrics: status %d: %v", n.id, status, err)
	}
	for line := range strings.Lines(body) {
		if strings.HasPrefix(line, "sluice_build_info{") {
			return strings.TrimSpace(line), nil
		}
	}
	return "", nil
}
