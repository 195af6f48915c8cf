package commitlog

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/vfs"
)

// A move between log dirs leaves, at any instant, one of these on disk
// (S the source log dir, D the destination, U the move's id):
//
//	S/<tp>, D/<tp>.U-future         copying: the future log is resumed
//	S/<tp>.U-delete, D/<tp>.U-future the swap's first rename happened: the
//	                                 second (future to D/<tp>) is completed
//	S/<tp>.U-delete, D/<tp>          swapped: the old log is removed
//
// so a kill -9 at any point leaves one complete log. PlanStartup decides,
// from the listings of the log dirs before any log is loaded, what to do
// with each future dir; it is pure so its cases are a datadriven test.

// futureDirRE matches Kafka's future log dir name, "<topic>-<p>.<uuid>-future"
// (UnifiedLog.logFutureDirName: a 32-hex-digit id).
var futureDirRE = regexp.MustCompile(`^(.+-[0-9]+)\.([0-9a-f]{32})-future$`)

// deleteDirRE matches "<topic>-<p>.<uuid>-delete".
var deleteDirRE = regexp.MustCompile(`^(.+-[0-9]+)\.([0-9a-f]{32})-delete$`)

// DirListing is the entry names of one log dir.
type DirListing struct {
	Dir   string
	Names []string
}

// StartupStepKind is what start-up does with a future log dir.
type StartupStepKind int

// The kinds of start-up steps.
const (
	// StepResume loads the future log; its copy continues (Kafka loads
	// future logs and restarts their ReplicaAlterLogDirsThread).
	StepResume StartupStepKind = iota
	// StepComplete renames the future log to the partition's dir: the
	// swap had renamed the current log for deletion already.
	StepComplete
	// StepDiscard removes the future log: its partition has no log here
	// any more, or another future of it was kept.
	StepDiscard
)

func (k StartupStepKind) String() string { return [...]string{"resume", "complete", "discard"}[k] }

// StartupStep is one decision of PlanStartup.
type StartupStep struct {
	Kind StartupStepKind
	Dir  string // the log dir holding the future
	Name string // the future's dir name
	// Partition is the future's "<topic>-<p>".
	Partition string
}

// PlanStartup decides the fate of every future dir in listings. When not
// allListed (a log dir could not be read), a future whose current log is
// not found may be waiting for that dir: it is left alone.
func PlanStartup(listings []DirListing, allListed bool) []StartupStep {
	current := map[string]string{} // partitions with a log: their log dir
	deleting := map[string]bool{}  // "<tp>.<U>" renamed for deletion
	type future struct{ dir, name, tp, id string }
	var futures []future
	for _, l := range listings {
		for _, n := range l.Names {
			if m := futureDirRE.FindStringSubmatch(n); m != nil {
				futures = append(futures, future{l.Dir, n, m[1], m[2]})
			} else if m := deleteDirRE.FindStringSubmatch(n); m != nil {
				deleting[m[1]+"."+m[2]] = true
			} else if _, ok := parseLogDirName(n); ok {
				current[n] = l.Dir
			}
		}
	}
	sort.SliceStable(futures, func(i, j int) bool { return futures[i].tp < futures[j].tp })
	var steps []StartupStep
	kept := map[string]bool{}
	for _, f := range futures {
		step := StartupStep{Dir: f.dir, Name: f.name, Partition: f.tp}
		switch {
		case kept[f.tp]:
			step.Kind = StepDiscard
		case current[f.tp] == f.dir:
			step.Kind = StepDiscard // a move into the dir it is in: never made
		case current[f.tp] != "":
			step.Kind = StepResume
		case deleting[f.tp+"."+f.id]:
			step.Kind = StepComplete
		case !allListed:
			continue
		default:
			step.Kind = StepDiscard
		}
		if step.Kind != StepDiscard {
			kept[f.tp] = true
		}
		steps = append(steps, step)
	}
	return steps
}

// settleMoves applies PlanStartup before the dirs load: interrupted swaps
// are completed, unwanted futures removed. It returns, per log dir, the
// future dir names loadDir resumes. A dir that cannot be listed here fails
// in loadDir.
func (m *Manager) settleMoves() map[string]map[string]bool {
	var listings []DirListing
	all := true
	for _, d := range m.opts.Dirs {
		names, err := m.fsys.List(d)
		if err != nil {
			all = all && vfs.IsNotExist(err)
			continue
		}
		listings = append(listings, DirListing{Dir: d, Names: names})
	}
	resume := map[string]map[string]bool{}
	for _, st := range PlanStartup(listings, all) {
		path := filepath.Join(st.Dir, st.Name)
		var err error
		switch st.Kind {
		case StepResume:
			if resume[st.Dir] == nil {
				resume[st.Dir] = map[string]bool{}
			}
			resume[st.Dir][st.Name] = true
			m.logger.Info("resuming the move of a partition to another log dir", "partition", st.Partition, "dir", st.Dir)
		case StepComplete:
			err = m.renameSynced(path, filepath.Join(st.Dir, st.Partition))
			m.logger.Warn("completing a move between log dirs a stop interrupted", "partition", st.Partition, "dir", st.Dir)
		case StepDiscard:
			err = m.fsys.RemoveAll(path)
			m.logger.Warn("removing a future log whose move cannot continue", "partition", st.Partition, "path", path)
		}
		if err != nil {
			// loadDir meets the same dir and takes it offline.
			m.logger.Error("settling a move between log dirs", "path", path, "err", err)
		}
	}
	return resume
}

// tpOfFuture is the partition of a future dir name.
func tpOfFuture(name string) kafka.TopicPartition {
	if m := futureDirRE.FindStringSubmatch(name); m != nil {
		tp, _ := parseLogDirName(m[1])
		return tp
	}
	return kafka.TopicPartition{}
}

// loadFuture opens a future log found at start-up.
func (m *Manager) loadFuture(dir, name string, st StartState) (*futureLog, error) {
	sub := futureDirRE.FindStringSubmatch(name)
	tp := tpOfFuture(name)
	l, err := m.openLogAt(dir, filepath.Join(dir, name), tp, m.opts.Defaults, st)
	if err != nil {
		return nil, fmt.Errorf("load future log %s: %w", name, err)
	}
	return &futureLog{log: l, dir: dir, id: sub[2]}, nil
}
