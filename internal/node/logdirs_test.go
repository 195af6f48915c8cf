package node

import "testing"

func TestLogDirFailureFatal(t *testing.T) {
	dirs := []string{"/d1", "/d2"}
	for _, c := range []struct {
		dir    string
		online int
		want   string
	}{
		{"/d2", 1, ""}, // another dir serves on
		{"/d1", 1, "Shutdown broker because the metadata log dir /d1 has failed"},
		{"/d2", 0, "Shutdown broker because all log dirs in /d1, /d2 have failed"},
	} {
		if got := logDirFailureFatal(c.dir, c.online, "/d1", dirs); got != c.want {
			t.Errorf("%s failed with %d online: %q, want %q", c.dir, c.online, got, c.want)
		}
	}
}
