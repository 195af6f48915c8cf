// Package console drives the web console of a real `sluice server` process
// from headless Chromium (Debian's chromium, through the DevTools protocol
// with chromedp): every page loads without a script error, a console error
// or a 5xx; topics are created, messages produced and found, a group's
// offsets reset through the forms; read-only mode, the CSRF check and bad
// input are seen as a person in a browser sees them. Screenshots of every
// page go to $SLUICE_ARTIFACTS (default test/console/artifacts/).
//
// `make console-test` runs it after test/console/setup.sh installs Chromium
// when it is missing; `make test` leaves it out (it needs a browser).
package console

import (
	"fmt"
	"os"
	"testing"
)

// chromiumPath is the browser the tests drive. The sluice binary is built
// by the first test that starts a server (testbin.Build).
var chromiumPath string

func TestMain(m *testing.M) {
	path, err := findChromium()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	chromiumPath = path
	os.Exit(m.Run())
}
