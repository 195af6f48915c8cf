package compattable

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"sluice/internal/api"
)

// DocPath is the compatibility doc, relative to the module root.
const DocPath = "docs/compatibility.md"

// controllerHeading introduces the controller-only table inside the
// generated section.
const controllerHeading = "A node with the controller role in a quorum of several voters also binds its\n" +
	"CONTROLLER listeners. Their registry serves ApiVersions, the control-plane APIs\n" +
	"above and the handlers below, clipped to the controller vector (the broker\n" +
	"vector plus the controller-only keys); brokers register, heartbeat, fetch the\n" +
	"metadata log and send ISR changes there:\n"

// Generate reads the handlers of the module rooted at moduleRoot and renders
// the section for the pinned release: the broker listener's table, then the
// controller-only keys.
func Generate(moduleRoot string) (string, error) {
	regs, err := ReadRegistries(moduleRoot)
	if err != nil {
		return "", fmt.Errorf("read handlers: %w", err)
	}
	brokerTable, err := Render(api.PinnedRelease(), regs.Broker)
	if err != nil {
		return "", err
	}
	ctrlTable, err := RenderController(api.PinnedRelease(), regs.ControllerRelease, regs.ControllerExtra)
	if err != nil {
		return "", err
	}
	return Section(brokerTable, controllerHeading, ctrlTable), nil
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
