package quorum

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
)

// raftLogger adapts slog to raft.Logger. Raft names nodes by raft id
// (node.id + 1, printed with %x); the adapter prints them as Kafka's
// node.id. Raft's routine election chatter is logged at DEBUG, its state
// changes at INFO. Raft's Fatal and Panic report a broken invariant of its
// own state; raft expects them not to return, so they panic after logging,
// as raft's default logger does.
type raftLogger struct{ log *slog.Logger }

func (l raftLogger) Debug(v ...any) { l.log.Debug(fmt.Sprint(v...)) }
func (l raftLogger) Debugf(format string, v ...any) {
	l.logf(slog.LevelDebug, format, v)
}
func (l raftLogger) Info(v ...any) { l.log.Info(fmt.Sprint(v...)) }
func (l raftLogger) Infof(format string, v ...any) {
	l.logf(infoLevel(format), format, v)
}
func (l raftLogger) Warning(v ...any) { l.log.Warn(fmt.Sprint(v...)) }
func (l raftLogger) Warningf(format string, v ...any) {
	l.logf(slog.LevelWarn, format, v)
}
func (l raftLogger) Error(v ...any) { l.log.Error(fmt.Sprint(v...)) }
func (l raftLogger) Errorf(format string, v ...any) {
	l.logf(slog.LevelError, format, v)
}
func (l raftLogger) Fatal(v ...any)                 { l.Panic(v...) }
func (l raftLogger) Fatalf(format string, v ...any) { l.Panicf(format, v...) }
func (l raftLogger) Panic(v ...any) {
	msg := fmt.Sprint(v...)
	l.log.Error(msg)
	panic(msg)
}
func (l raftLogger) Panicf(format string, v ...any) {
	msg := nodeIDsf(format, v)
	l.log.Error(msg)
	panic(msg)
}

func (l raftLogger) logf(level slog.Level, format string, v []any) {
	if !l.log.Enabled(context.Background(), level) {
		return
	}
	l.log.Log(context.Background(), level, nodeIDsf(format, v))
}

// infoLevel keeps raft's role changes and leadership transfers at INFO
// and moves the rest of its INFO lines (votes, pre-votes, configuration,
// a line per election step) to DEBUG.
func infoLevel(format string) slog.Level {
	for _, keep := range []string{"became leader", "became follower", "transfer leadership", "forgetting leader", "with higher term", "restored snapshot"} {
		if strings.Contains(format, keep) {
			return slog.LevelInfo
		}
	}
	return slog.LevelDebug
}

// nodeIDsf formats a raft log line with every %x argument, which raft uses
// for raft ids only, printed as the node id it stands for, as are the id
// lists of its configuration ("voters=(2 3)") and peers ("[2,3]") lines.
func nodeIDsf(format string, v []any) string {
	var b strings.Builder
	arg := 0
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			b.WriteByte(format[i])
			continue
		}
		// The verb is the first letter after %, flags and width before it.
		j := i + 1
		for j < len(format) && !isVerb(format[j]) {
			j++
		}
		if j == len(format) {
			b.WriteString(format[i:])
			break
		}
		spec := format[i : j+1]
		i = j
		switch {
		case spec == "%%":
			b.WriteByte('%')
			continue
		case arg >= len(v):
			b.WriteString(spec + "(MISSING)")
			continue
		}
		if id, ok := v[arg].(uint64); ok && spec == "%x" {
			writeNodeID(&b, id)
		} else if spec == "%s" && idListBefore(format[:i-1]) {
			b.WriteString(idList.ReplaceAllStringFunc(fmt.Sprint(v[arg]), hexToNodeID))
		} else {
			fmt.Fprintf(&b, spec, v[arg])
		}
		arg++
	}
	return b.String()
}

func isVerb(c byte) bool { return c == '%' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') }

func writeNodeID(b *strings.Builder, id uint64) {
	if id == 0 {
		b.WriteString("none") // raft's None: no node
		return
	}
	fmt.Fprintf(b, "%d", NodeID(id))
}

// idList matches one raft id of a list raft prints in hex.
var idList = regexp.MustCompile(`\b[0-9a-f]+\b`)

// idListBefore reports whether the %s that follows prefix is a list of raft
// ids: the peers of newRaft's line or a configuration.
func idListBefore(prefix string) bool {
	return strings.HasSuffix(prefix, "peers: [") || strings.HasSuffix(prefix, "configuration ")
}

func hexToNodeID(hex string) string {
	id, err := strconv.ParseUint(hex, 16, 64)
	if err != nil || id == 0 {
		return hex
	}
	return strconv.Itoa(int(NodeID(id)))
}
