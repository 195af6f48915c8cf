package console

import (
	"testing"
)

// TestConsole runs one sluice process with data in it and one browser
// through the console's pages and forms, then restarts the process in
// read-only mode. The steps share the process and the browser (a start of
// each costs seconds on 2 cores) and run in order: later steps read what
// earlier ones wrote.
func TestConsole(t *testing.T) {
	s := startConsoleServer(t, t.TempDir(), nil)
	seed(t, s)
	b := newBrowser(t)
	steps := []struct {
		name string
		run  func(*testing.T, *browser, *consoleServer)
	}{
		{"Pages", testPages},
		{"Contents", testContents},
		{"CreateTopic", testCreateTopic},
		{"Produce", testProduce},
		{"Browse", testBrowse},
		{"ResetOffsets", testResetOffsets},
		{"LiveGroup", testLiveGroup},
		{"TopicConfigs", testTopicConfigs},
		{"DeleteTopic", testDeleteTopic},
		{"CSRF", testCSRF},
		{"BadInput", testBadInput},
		{"ReadOnly", testReadOnly},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) { st.run(t, b.in(t), s) })
	}
}
