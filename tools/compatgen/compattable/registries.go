package compattable

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
)

// The api functions whose handlers make up each listener's registry.
const (
	brokerSetFunc     = "BrokerHandlers"
	controllerSetFunc = "ControllerHandlers"
	// registryFunc adds the handlers every registry serves (ApiVersions).
	registryFunc = "NewRegistry"
)

// Registries are the handler ranges of the two registries a node builds.
type Registries struct {
	// Broker is the broker listeners' registry: BrokerHandlers plus what
	// NewRegistry adds.
	Broker []HandlerRange
	// Controller is the CONTROLLER listeners' registry: ControllerHandlers
	// plus what NewRegistry adds.
	Controller []HandlerRange
}

// ReadRegistries reads the api package's two handler sets and the handlers
// NewRegistry adds to both.
func ReadRegistries(moduleRoot string) (Registries, error) {
	apiDir := filepath.Join(moduleRoot, "internal", "api")
	common, err := readHandlerCalls(moduleRoot, apiDir, registryFunc, false)
	if err != nil {
		return Registries{}, err
	}
	var regs Registries
	for _, set := range []struct {
		fn  string
		dst *[]HandlerRange
	}{{brokerSetFunc, &regs.Broker}, {controllerSetFunc, &regs.Controller}} {
		hs, err := ReadHandlerSet(moduleRoot, apiDir, set.fn)
		if err != nil {
			return Registries{}, err
		}
		hs = append(hs, common...)
		if err := checkUnique(hs); err != nil {
			return Registries{}, fmt.Errorf("%s and %s: %w", set.fn, registryFunc, err)
		}
		sort.Slice(hs, func(i, j int) bool { return hs[i].Key < hs[j].Key })
		*set.dst = hs
	}
	return regs, nil
}

// SplitController parts the controller registry's handlers into those of
// its own (a constructor the broker set does not call: the controller-only
// keys and the keys a CONTROLLER listener answers differently) and those
// it shares with the broker listeners.
func SplitController(regs Registries) (own, shared []HandlerRange) {
	for _, h := range regs.Controller {
		if slices.ContainsFunc(regs.Broker, func(b HandlerRange) bool { return b.Constructor == h.Constructor }) {
			shared = append(shared, h)
		} else {
			own = append(own, h)
		}
	}
	return own, shared
}

func checkUnique(hs []HandlerRange) error {
	seen := make(map[int16]string, len(hs))
	for _, h := range hs {
		if prev, dup := seen[h.Key]; dup {
			return fmt.Errorf("api key %d registered twice (%s, %s)", h.Key, prev, h.Constructor)
		}
		seen[h.Key] = h.Constructor
	}
	return nil
}

func relFile(moduleRoot, path string) (string, error) {
	rel, err := filepath.Rel(moduleRoot, path)
	if err != nil {
		return "", err
	}
	return filepath.ToSlash(rel), nil
}
