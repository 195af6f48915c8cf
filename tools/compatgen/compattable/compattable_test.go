package compattable

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/internal/api"
)

const testModule = "testdata/mod"

func readBrokerSet(root string) ([]HandlerRange, error) {
	return ReadHandlerSet(root, filepath.Join(root, "internal", "api"), "BrokerHandlers")
}

func TestReadHandlerSetResolvesConstants(t *testing.T) {
	got, err := readBrokerSet(testModule)
	if err != nil {
		t.Fatal(err)
	}
	want := []HandlerRange{
		{Key: 0, MinVersion: 3, MaxVersion: 9, File: "internal/api/00_produce.go", Constructor: "newProduceHandler"},
		{Key: 1, MinVersion: 4, MaxVersion: 18, File: "internal/api/01_fetch.go", Constructor: "newFetchHandler"},
		{Key: 55, MinVersion: 0, MaxVersion: 2, File: "internal/api/controller.go", Constructor: "newDescribeQuorumHandler"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("handler %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

// copyModule copies the test module so a test can break one file.
func copyModule(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(testModule, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(testModule, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestReadHandlerSetRefusesWhatItCannotRead(t *testing.T) {
	for name, tc := range map[string]struct{ file, src, wantErr string }{
		"non-constant version": {"00_produce.go", `package api
func newProduceHandler(d *DataPlaneDeps) Handler {
	return Handler{Key: 0, MinVersion: 0, MaxVersion: pick()}
}`, "cannot evaluate"},
		"two handlers": {"00_produce.go", `package api
func newProduceHandler(d *DataPlaneDeps) Handler {
	if d.X {
		return Handler{Key: 0, MinVersion: 0, MaxVersion: 3}
	}
	return Handler{Key: 0, MinVersion: 0, MaxVersion: 9}
}`, "exactly one"},
		"listed but undefined": {"00_produce.go", "package api\n", "not defined"},
		"duplicate key": {"00_produce.go", `package api
func newProduceHandler(d *DataPlaneDeps) Handler {
	return Handler{Key: 1, MinVersion: 0, MaxVersion: 9}
}`, "built by both"},
		"outside constant": {"00_produce.go", `package api
import "github.com/twmb/franz-go/pkg/kmsg"
func newProduceHandler(d *DataPlaneDeps) Handler {
	return Handler{Key: 0, MinVersion: 0, MaxVersion: kmsg.Max}
}`, "only packages of module"},
		"hidden behind a helper": {"00_produce.go", `package api
func newProduceHandler(d *DataPlaneDeps) []Handler {
	return []Handler{{Key: 0, MinVersion: 0, MaxVersion: 9}}
}`, "not a handler constructor"},
	} {
		t.Run(name, func(t *testing.T) {
			root := copyModule(t)
			apiDir := filepath.Join(root, "internal", "api")
			if err := os.WriteFile(filepath.Join(apiDir, tc.file), []byte(tc.src), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := readBrokerSet(root)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("got error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func testRelease() api.Release {
	return api.Release{Name: "9.9.9", APIs: []api.VersionRange{
		{Key: 0, Min: 0, Max: 13}, {Key: 1, Min: 4, Max: 18}, {Key: 38, Min: 1, Max: 3},
	}}
}

func TestRenderClipsAndExplains(t *testing.T) {
	got, err := Render(testRelease(), []HandlerRange{
		{Key: 0, MinVersion: 3, MaxVersion: 20, File: "internal/api/00_produce.go"},
		{Key: 1, MinVersion: 4, MaxVersion: 18, File: "internal/api/01_fetch.go"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| 0 | Produce | 0-13 | 3-13 | [`00_produce.go`](../internal/api/00_produce.go); narrower than Kafka's |",
		"| 1 | Fetch | 4-18 | 4-18 | [`01_fetch.go`](../internal/api/01_fetch.go) |",
		"| 38 | CreateDelegationToken | 1-3 | not served | delegation tokens are not built",
		"2 of the 3 keys Kafka 9.9.9's broker listener advertises are served.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	section := Section(got, "middle\n", "last\n")
	if !strings.HasPrefix(section, BeginMarker+"\n\n| Key |") || !strings.HasSuffix(section, "\nmiddle\n\nlast\n\n"+EndMarker+"\n") {
		t.Errorf("section not delimited by the markers:\n%s", section)
	}
}

func keys(hs []HandlerRange) []int16 {
	var out []int16
	for _, h := range hs {
		out = append(out, h.Key)
	}
	return out
}

func TestReadRegistriesAddsApiVersionsToBothSets(t *testing.T) {
	regs, err := ReadRegistries(testModule)
	if err != nil {
		t.Fatal(err)
	}
	if got := keys(regs.Broker); !slices.Equal(got, []int16{0, 1, 18, 55}) {
		t.Errorf("broker keys %v, want [0 1 18 55]", got)
	}
	if got := keys(regs.Controller); !slices.Equal(got, []int16{1, 18, 55, 62}) {
		t.Errorf("controller keys %v, want [1 18 55 62]", got)
	}
	if f := regs.Controller[3].File; f != "internal/api/controller.go" {
		t.Errorf("controller handler file %q", f)
	}
}

// SplitController keeps in the controller table the handlers the broker set
// does not build the same way: another constructor for the same key counts.
func TestSplitControllerByConstructor(t *testing.T) {
	regs, err := ReadRegistries(testModule)
	if err != nil {
		t.Fatal(err)
	}
	own, shared := SplitController(regs)
	if got := keys(own); !slices.Equal(got, []int16{1, 55, 62}) {
		t.Errorf("controller's own keys %v, want [1 55 62]", got)
	}
	if got := keys(shared); !slices.Equal(got, []int16{18}) {
		t.Errorf("shared keys %v, want [18]", got)
	}
	heading := ControllerHeading(shared)
	if !strings.Contains(strings.Join(strings.Fields(heading), " "), "handlers of ApiVersions (18), as above") {
		t.Errorf("heading does not name the shared handler:\n%s", heading)
	}
	for _, line := range strings.Split(strings.TrimSuffix(heading, "\n"), "\n") {
		if len(line) > 80 {
			t.Errorf("heading line longer than 80: %q", line)
		}
	}
}

func TestRenderController(t *testing.T) {
	broker := testRelease()
	ctrl := testRelease()
	ctrl.APIs = append(ctrl.APIs, api.VersionRange{Key: 62, Min: 0, Max: 4}, api.VersionRange{Key: 63, Min: 0, Max: 1})
	handlers := []HandlerRange{
		{Key: 1, MinVersion: 4, MaxVersion: 16, File: "internal/api/01_fetch.go"},
		{Key: 62, MinVersion: 0, MaxVersion: 4, File: "internal/api/62_broker_registration.go"},
		{Key: 63, MinVersion: 0, MaxVersion: 0, File: "internal/api/63_broker_heartbeat.go"},
	}
	got, err := RenderController(broker, ctrl, handlers)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| 1 | Fetch | 4-18 | 4-16 | [`01_fetch.go`](../internal/api/01_fetch.go); narrower than the vector's |",
		"| 62 | BrokerRegistration | 0-4 | 0-4 | [`62_broker_registration.go`](../internal/api/62_broker_registration.go); controller only |",
		"| 63 | BrokerHeartbeat | 0-1 | 0 | [`63_broker_heartbeat.go`](../internal/api/63_broker_heartbeat.go); narrower than the vector's; controller only |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "| 0 | Produce") {
		t.Errorf("controller table lists a key without an extra handler:\n%s", got)
	}
	if _, err := RenderController(broker, ctrl, handlers[:2]); err == nil {
		t.Error("accepted a controller-only key without a handler")
	}
	if _, err := RenderController(broker, broker, handlers); err == nil {
		t.Error("accepted a handler for a key outside the controller release")
	}
}
