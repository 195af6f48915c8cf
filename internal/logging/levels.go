// Package logging is the node's log/slog setup: text or JSON output and
// log levels per component changeable at run time, as Kafka's log4j loggers
// are through the BROKER_LOGGER config resource (KIP-412). The loggers are
// "root" and one per component (the slog attribute "component" a package
// sets with Logger.With); a component without a level of its own follows
// root. Handlers read the levels with atomic loads only, so logging takes
// no lock.
package logging

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// RootLogger is the logger every component without a level follows.
const RootLogger = "root"

// Kafka's level names beyond slog's: TRACE below DEBUG, FATAL above ERROR.
const (
	LevelTrace = slog.LevelDebug - 4
	LevelFatal = slog.LevelError + 4
)

// levelName is a level and Kafka's name of it.
type levelName struct {
	name  string
	level slog.Level
}

// levelNames are Kafka's valid log levels (LogLevelConfig.VALID_LOG_LEVELS).
var levelNames = []levelName{
	{"TRACE", LevelTrace}, {"DEBUG", slog.LevelDebug}, {"INFO", slog.LevelInfo},
	{"WARN", slog.LevelWarn}, {"ERROR", slog.LevelError}, {"FATAL", LevelFatal},
}

// ValidLevels lists the level names sorted, as Kafka's messages do.
func ValidLevels() string {
	names := make([]string, 0, len(levelNames))
	for _, l := range levelNames {
		names = append(names, l.name)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// ParseLevel reads one of Kafka's level names (case-insensitive).
func ParseLevel(s string) (slog.Level, error) {
	for _, l := range levelNames {
		if strings.EqualFold(strings.TrimSpace(s), l.name) {
			return l.level, nil
		}
	}
	return 0, fmt.Errorf("%w %q: valid log levels are %s", ErrInvalidLevel, s, ValidLevels())
}

// LevelName is Kafka's name of a level: the nearest named level at or
// below it.
func LevelName(l slog.Level) string {
	name := levelNames[0].name
	for _, n := range levelNames {
		if l >= n.level {
			name = n.name
		}
	}
	return name
}

// Errors of SetLevel and UnsetLevel, which the BROKER_LOGGER handlers map
// to Kafka's error codes.
var (
	ErrUnknownLogger = errors.New("unknown logger")
	ErrInvalidLevel  = errors.New("invalid log level")
	ErrRootUnset     = errors.New("the root logger's level cannot be removed")
)

// Levels holds the root level and each component's. The map is read and
// grown under mu only when a logger is derived or an operator changes a
// level; the logging path reads a component's atomics.
type Levels struct {
	root atomic.Int64

	mu         sync.Mutex
	components map[string]*componentLevel
}

// componentLevel is one component's level: its own when set, else root's.
type componentLevel struct {
	root  *atomic.Int64
	set   atomic.Bool
	level atomic.Int64
}

func (c *componentLevel) effective() slog.Level {
	if c.set.Load() {
		return slog.Level(c.level.Load())
	}
	return slog.Level(c.root.Load())
}

// NewLevels starts every logger at root.
func NewLevels(root slog.Level) *Levels {
	l := &Levels{components: map[string]*componentLevel{}}
	l.root.Store(int64(root))
	return l
}

// component returns (and creates on first use) a component's level.
func (l *Levels) component(name string) *componentLevel {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, ok := l.components[name]
	if !ok {
		c = &componentLevel{root: &l.root}
		l.components[name] = c
	}
	return c
}

// Root is the root logger's level.
func (l *Levels) Root() slog.Level { return slog.Level(l.root.Load()) }

// Loggers lists root and the known components with their effective levels,
// root first and the components by name.
func (l *Levels) Loggers() []Logger {
	l.mu.Lock()
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range l.components {
			if !yield(n) {
				return
			}
		}
	})
	out := []Logger{{Name: RootLogger, Level: l.Root()}}
	for _, n := range names {
		out = append(out, Logger{Name: n, Level: l.components[n].effective()})
	}
	l.mu.Unlock()
	return out
}

// Logger is a logger's name and effective level.
type Logger struct {
	Name  string
	Level slog.Level
}

// Exists reports whether name is root or a known component.
func (l *Levels) Exists(name string) bool {
	if name == RootLogger {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.components[name]
	return ok
}

// SetLevel sets a logger's level (a level name); root's applies to every
// component without a level of its own.
func (l *Levels) SetLevel(name, level string) error {
	lv, err := ParseLevel(level)
	if err != nil {
		return err
	}
	if name == RootLogger {
		l.root.Store(int64(lv))
		return nil
	}
	if !l.Exists(name) {
		return fmt.Errorf("%w %q", ErrUnknownLogger, name)
	}
	c := l.component(name)
	c.level.Store(int64(lv))
	c.set.Store(true)
	return nil
}

// UnsetLevel makes a component follow root again.
func (l *Levels) UnsetLevel(name string) error {
	if name == RootLogger {
		return ErrRootUnset
	}
	if !l.Exists(name) {
		return fmt.Errorf("%w %q", ErrUnknownLogger, name)
	}
	l.component(name).set.Store(false)
	return nil
}

// IsLevelName reports whether s is one of Kafka's level names exactly (the
// BROKER_LOGGER resource takes them in capitals, as Kafka does).
func IsLevelName(s string) bool {
	return slices.ContainsFunc(levelNames, func(l levelName) bool { return l.name == s })
}
