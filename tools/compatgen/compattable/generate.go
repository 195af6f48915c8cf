package compattable

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sluice-io/sluice/internal/api"
)

// DocPath is the compatibility doc, relative to the module root.
const DocPath = "docs/compatibility.md"

// Generate reads the handlers of the module rooted at moduleRoot and renders
// the section for the pinned release: the broker listener's table, then the
// CONTROLLER listener's handlers of its own.
func Generate(moduleRoot string) (string, error) {
	regs, err := ReadRegistries(moduleRoot)
	if err != nil {
		return "", fmt.Errorf("read handlers: %w", err)
	}
	brokerTable, err := Render(api.BrokerRelease(), regs.Broker)
	if err != nil {
		return "", err
	}
	own, shared := SplitController(regs)
	ctrlTable, err := RenderController(api.BrokerRelease(), api.ControllerListenerRelease(), own)
	if err != nil {
		return "", err
	}
	return Section(brokerTable, ControllerHeading(shared), ctrlTable), nil
}

// ControllerHeading introduces the controller table: the CONTROLLER
// listeners' registry serves the shared handlers (the broker listener's,
// listed by name) and the table's.
func ControllerHeading(shared []HandlerRange) string {
	names := make([]string, 0, len(shared))
	for _, h := range shared {
		// A NUL keeps a name and its key on one line; wrap restores the space.
		names = append(names, fmt.Sprintf("%s\x00(%d)", apiName(h.Key), h.Key))
	}
	text := "A node with the controller role in a quorum of several voters also binds its " +
		"CONTROLLER listeners. Their registry serves the broker listener's handlers of " +
		joinNames(names) + ", as above, and the handlers below, clipped to the controller " +
		"vector (the broker vector plus the controller-only keys); brokers register, " +
		"heartbeat, fetch the metadata log and send ISR changes there:"
	return strings.ReplaceAll(wrap(text, 80), "\x00", " ")
}

// joinNames joins names as an English list.
func joinNames(names []string) string {
	switch len(names) {
	case 0:
		return "no key"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// wrap breaks text into lines of at most width characters (longer words
// stand alone), each ending in a newline.
func wrap(text string, width int) string {
	var b strings.Builder
	line := 0
	for _, w := range strings.Fields(text) {
		if line > 0 && line+1+len(w) > width {
			b.WriteString("\n")
			line = 0
		}
		if line > 0 {
			b.WriteByte(' ')
			line++
		}
		b.WriteString(w)
		line += len(w)
	}
	b.WriteString("\n")
	return b.String()
}

// ModuleRoot walks up from dir to the directory holding go.mod.
func ModuleRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("module root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("module root: %w", err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("module root: no go.mod above the working directory")
		}
		dir = parent
	}
}
