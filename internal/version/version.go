// Package version holds Sluice's release version and the revision it was
// built from. `make build` and `make release` stamp both with -ldflags -X
// from the VERSION file and git; a plain `go build` or `go run` reports the
// development version of the next release and the VCS revision Go
// recorded, if any.
package version

import (
	"runtime"
	"runtime/debug"
)

// Stamped at build time (-ldflags "-X github.com/sluice-io/sluice/internal/version.version=0.2.0
// -X github.com/sluice-io/sluice/internal/version.revision=<git sha>"). Variables
// because -X can set only package-level string variables; nothing writes them
// at run time.
var (
	version  = ""
	revision = ""
)

// dev is what an unstamped build calls itself: the next release (the
// VERSION file at the repository's root, checked by a test), marked as not
// being it (semantic versioning's pre-release suffix).
const dev = "0.2.0-dev"

// Version is the semantic version, without a leading "v".
func Version() string {
	if version != "" {
		return version
	}
	return dev
}

// Revision is the git revision the binary was built from, "unknown" when
// neither the build nor Go's VCS stamping recorded one.
func Revision() string {
	if revision != "" {
		return revision
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return "unknown"
}

// GoVersion is the Go release the binary was compiled with.
func GoVersion() string { return runtime.Version() }

// Platform is the binary's target, as GOOS/GOARCH.
func Platform() string { return runtime.GOOS + "/" + runtime.GOARCH }

// Summary describes the build in one line without the program's name:
// "0.2.0 (revision 1a2b3c4d5e6f, go1.26.8, linux/amd64)".
func Summary() string {
	return Version() + " (revision " + Revision() + ", " + GoVersion() + ", " + Platform() + ")"
}
