package main

import (
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/internal/commitlog/metafile"
	"github.com/sluice-io/sluice/internal/vfs"
)

func TestFormatFromEnv(t *testing.T) {
	dir := t.TempDir()
	cfg, err := loadConfig("", []string{
		"node.id=2", "process.roles=broker,controller", "controller.listener.names=CONTROLLER",
		"listeners=PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:0",
		"controller.quorum.voters=1@127.0.0.1:1,2@127.0.0.1:2,3@127.0.0.1:3", "log.dirs=" + dir,
	})
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	env := func(v string) func(string) (string, bool) {
		return func(name string) (string, bool) { return v, name == clusterIDEnv && v != "" }
	}
	metaPath := filepath.Join(dir, metafile.MetaPropertiesFile)

	if err := formatFromEnv(vfs.Default, cfg, env(""), logger); err != nil {
		t.Fatal(err)
	}
	if _, err := metafile.ReadMetaProperties(vfs.Default, metaPath); !vfs.IsNotExist(err) {
		t.Fatalf("formatted without %s: %v", clusterIDEnv, err)
	}

	const id = "4L6g3nShT-eMCtK--X86sw"
	for range 2 { // the second start finds it formatted with the same id
		if err := formatFromEnv(vfs.Default, cfg, env(id), logger); err != nil {
			t.Fatal(err)
		}
		m, err := metafile.ReadMetaProperties(vfs.Default, metaPath)
		if err != nil || m.ClusterID != id || m.NodeID != 2 {
			t.Fatalf("meta.properties %+v, %v; want cluster %s node 2", m, err, id)
		}
	}

	err = formatFromEnv(vfs.Default, cfg, env("5L6g3nShT-eMCtK--X86sw"), logger)
	if err == nil || !strings.Contains(err.Error(), id) || !strings.Contains(err.Error(), clusterIDEnv) {
		t.Fatalf("a log dir of another cluster: %v", err)
	}

	other, err := loadConfig("", []string{"log.dirs=" + t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := formatFromEnv(vfs.Default, other, env("not-a-uuid"), logger); err == nil || !strings.Contains(err.Error(), clusterIDEnv) {
		t.Fatalf("a malformed %s: %v", clusterIDEnv, err)
	}
}
