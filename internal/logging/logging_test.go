package logging

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestComponentLevelsFollowRootUntilSet: a component logs at root's level
// until given its own; unsetting it follows root again; root's change
// reaches every component without one.
func TestComponentLevelsFollowRootUntilSet(t *testing.T) {
	var buf bytes.Buffer
	log, err := New(&buf, "text", "INFO")
	if err != nil {
		t.Fatal(err)
	}
	_, levels := Adopt(log)
	quorum := log.With(ComponentKey, "quorum")
	server := log.With(ComponentKey, "server")
	emit := func() string {
		buf.Reset()
		quorum.Debug("quorum debug")
		server.Debug("server debug")
		log.Debug("root debug")
		server.Log(t.Context(), LevelTrace, "server trace")
		return buf.String()
	}
	has := func(out string, want ...string) {
		t.Helper()
		for _, w := range []string{"quorum debug", "server debug", "root debug", "server trace"} {
			if strings.Contains(out, w) != slices.Contains(want, w) {
				t.Errorf("output %q: %q present %t, want %t", out, w, strings.Contains(out, w), slices.Contains(want, w))
			}
		}
	}
	has(emit())
	if err := levels.SetLevel("server", "TRACE"); err != nil {
		t.Fatal(err)
	}
	out := emit()
	has(out, "server debug", "server trace")
	if !strings.Contains(out, "level=TRACE") {
		t.Errorf("trace written without Kafka's name: %q", out)
	}
	if err := levels.SetLevel(RootLogger, "debug"); err != nil {
		t.Fatal(err)
	}
	has(emit(), "quorum debug", "server debug", "root debug", "server trace")
	if err := levels.UnsetLevel("server"); err != nil {
		t.Fatal(err)
	}
	has(emit(), "quorum debug", "server debug", "root debug")
	want := []Logger{{RootLogger, slog.LevelDebug}, {"quorum", slog.LevelDebug}, {"server", slog.LevelDebug}}
	if got := levels.Loggers(); !slices.Equal(got, want) {
		t.Errorf("loggers %v, want %v", got, want)
	}
}

func TestLevelRefusals(t *testing.T) {
	levels := NewLevels(slog.LevelInfo)
	if err := levels.SetLevel("nope", "DEBUG"); !errors.Is(err, ErrUnknownLogger) {
		t.Errorf("unknown logger: %v", err)
	}
	if err := levels.UnsetLevel("nope"); !errors.Is(err, ErrUnknownLogger) {
		t.Errorf("unset unknown logger: %v", err)
	}
	if err := levels.SetLevel(RootLogger, "LOUD"); !errors.Is(err, ErrInvalidLevel) || !strings.Contains(err.Error(), "DEBUG, ERROR, FATAL, INFO, TRACE, WARN") {
		t.Errorf("bad level: %v", err)
	}
	if err := levels.UnsetLevel(RootLogger); !errors.Is(err, ErrRootUnset) {
		t.Errorf("unset root: %v", err)
	}
	if _, err := New(&bytes.Buffer{}, "xml", ""); err == nil || !strings.Contains(err.Error(), "want text or json") {
		t.Errorf("format xml: %v", err)
	}
	if _, err := New(&bytes.Buffer{}, "text", "LOUD"); !errors.Is(err, ErrInvalidLevel) {
		t.Errorf("level LOUD: %v", err)
	}
}

func TestJSONFormat(t *testing.T) {
	var buf bytes.Buffer
	log, err := New(&buf, "json", "WARN")
	if err != nil {
		t.Fatal(err)
	}
	log.With(ComponentKey, "cleaner").Info("hidden")
	log.With(ComponentKey, "cleaner").Warn("shown", "partition", 3)
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatalf("not one JSON record: %q: %v", buf.String(), err)
	}
	if rec["msg"] != "shown" || rec["level"] != "WARN" || rec["component"] != "cleaner" || rec["partition"] != float64(3) {
		t.Errorf("record %v", rec)
	}
}

// TestAdoptKeepsAForeignLoggersLevel: a logger built elsewhere keeps its
// lowest enabled level as root.
func TestAdoptKeepsAForeignLoggersLevel(t *testing.T) {
	var buf bytes.Buffer
	foreign := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}))
	log, levels := Adopt(foreign)
	if levels.Root() != slog.LevelWarn {
		t.Errorf("root %v, want WARN", levels.Root())
	}
	log.Info("hidden")
	log.Warn("shown")
	if strings.Contains(buf.String(), "hidden") || !strings.Contains(buf.String(), "shown") {
		t.Errorf("output %q", buf.String())
	}
}

// TestLevelsUnderConcurrentChange is for the race detector: loggers
// derived, written and re-levelled at once.
func TestLevelsUnderConcurrentChange(t *testing.T) {
	log, err := New(&bytes.Buffer{}, "json", "INFO")
	if err != nil {
		t.Fatal(err)
	}
	_, levels := Adopt(log)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			l := log.With(ComponentKey, []string{"a", "b"}[i%2])
			for range 200 {
				l.Debug("x")
			}
		})
	}
	wg.Go(func() {
		for i := range 200 {
			_ = levels.SetLevel(RootLogger, []string{"DEBUG", "INFO"}[i%2])
			_ = levels.SetLevel("a", "TRACE")
			_ = levels.UnsetLevel("a")
		}
	})
	wg.Wait()
}
