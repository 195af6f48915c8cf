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

// Generate reads the handlers of the module rooted at moduleRoot and renders
// the section for the pinned release.
func Generate(moduleRoot string) (string, error) {
	handlers, err := ReadHandlers(moduleRoot, filepath.Join(moduleRoot, "internal", "api"))
	if err != nil {
		return "", fmt.Errorf("read handlers: %w", err)
	}
	return Render(api.PinnedRelease(), handlers)
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
