package logging

import (
	"context"
	"fmt"
	"io"
	"log/slog"
)

// ComponentKey is the attribute naming a component's logger.
const ComponentKey = "component"

// Handler filters records by the level of the component its logger was
// derived for (root's until a "component" attribute is added) and passes
// the rest to the inner handler.
type Handler struct {
	inner  slog.Handler
	levels *Levels
	comp   *componentLevel // nil: the root logger
}

// NewHandler wraps inner; inner should enable every level, since the
// Handler decides.
func NewHandler(inner slog.Handler, levels *Levels) *Handler {
	return &Handler{inner: inner, levels: levels}
}

// Levels are the levels the handler consults.
func (h *Handler) Levels() *Levels { return h.levels }

// Enabled reports whether level reaches the component's level.
func (h *Handler) Enabled(ctx context.Context, level slog.Level) bool {
	floor := h.levels.Root()
	if h.comp != nil {
		floor = h.comp.effective()
	}
	return level >= floor && h.inner.Enabled(ctx, level)
}

// Handle passes the record on.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	return h.inner.Handle(ctx, r)
}

// WithAttrs derives a handler; a "component" attribute selects that
// component's level.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	out := &Handler{inner: h.inner.WithAttrs(attrs), levels: h.levels, comp: h.comp}
	for _, a := range attrs {
		if a.Key == ComponentKey {
			out.comp = h.levels.component(a.Value.String())
		}
	}
	return out
}

// WithGroup derives a handler with a group; the component stays.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{inner: h.inner.WithGroup(name), levels: h.levels, comp: h.comp}
}

// New builds the process's logger: format "text" or "json" ("" is text)
// on w, the root logger at level (a Kafka level name, "" for INFO).
func New(w io.Writer, format, level string) (*slog.Logger, error) {
	root := slog.LevelInfo
	if level != "" {
		var err error
		if root, err = ParseLevel(level); err != nil {
			return nil, err
		}
	}
	opts := &slog.HandlerOptions{Level: slog.Level(-1 << 10), ReplaceAttr: kafkaLevelNames}
	var inner slog.Handler
	switch format {
	case "", "text":
		inner = slog.NewTextHandler(w, opts)
	case "json":
		inner = slog.NewJSONHandler(w, opts)
	default:
		return nil, fmt.Errorf("log format %q: want text or json", format)
	}
	return slog.New(NewHandler(inner, NewLevels(root))), nil
}

// kafkaLevelNames writes TRACE and FATAL, not DEBUG-4 and ERROR+4.
func kafkaLevelNames(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.LevelKey {
		if l, ok := a.Value.Any().(slog.Level); ok {
			a.Value = slog.StringValue(LevelName(l))
		}
	}
	return a
}

// Adopt returns the Levels of a logger built by New, or wraps a logger
// built elsewhere (tests, embedding) so its levels can change too; the
// root then starts at the lowest level the logger enabled.
func Adopt(l *slog.Logger) (*slog.Logger, *Levels) {
	if h, ok := l.Handler().(*Handler); ok {
		return l, h.levels
	}
	root := LevelFatal
	for _, n := range levelNames {
		if l.Handler().Enabled(context.Background(), n.level) {
			root = n.level
			break
		}
	}
	levels := NewLevels(root)
	return slog.New(NewHandler(l.Handler(), levels)), levels
}
