package version

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// semver is semantic versioning 2.0's core version with an optional
// pre-release (build metadata is not used).
var semver = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$`)

// TestDevMatchesVersionFile keeps the unstamped version in step with the
// VERSION file that make stamps releases from: bumping one without the
// other fails here.
func TestDevMatchesVersionFile(t *testing.T) {
	data, err := os.ReadFile("../../VERSION")
	if err != nil {
		t.Fatal(err)
	}
	file := strings.TrimSpace(string(data))
	if !semver.MatchString(file) || strings.Contains(file, "-") {
		t.Fatalf("VERSION holds %q, want a release version MAJOR.MINOR.PATCH", file)
	}
	if want := file + "-dev"; dev != want {
		t.Fatalf("unstamped version %q, want %q (VERSION says %s)", dev, want, file)
	}
	if !semver.MatchString(dev) {
		t.Fatalf("unstamped version %q is not a semantic version", dev)
	}
}

func TestUnstampedAndStamped(t *testing.T) {
	if Version() != dev {
		t.Fatalf("unstamped Version() = %q, want %q", Version(), dev)
	}
	if Revision() == "" {
		t.Fatal("Revision() is empty, want a revision or \"unknown\"")
	}
	defer func(v, r string) { version, revision = v, r }(version, revision)
	version, revision = "1.2.3", "0123456789ab"
	if got, want := Summary(), "1.2.3 (revision 0123456789ab, "+GoVersion()+", "+Platform()+")"; got != want {
		t.Fatalf("Summary() = %q, want %q", got, want)
	}
}
