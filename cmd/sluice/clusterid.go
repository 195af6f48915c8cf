package main

import (
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/sluice-io/sluice/internal/commitlog/logdir"
	"github.com/sluice-io/sluice/internal/commitlog/metafile"
	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/vfs"
)

// clusterIDEnv is the variable with which Kafka's container image formats
// its storage before the first start; `sluice server --config-env` reads it
// too, so every node of a compose file or a StatefulSet can share one id
// without a `sluice storage format` step (the image has no shell to run one).
const clusterIDEnv = "CLUSTER_ID"

// formatFromEnv formats the node's log dirs with the cluster id of
// $CLUSTER_ID when none of them is formatted yet; formatted ones must hold
// that id. Without the variable it does nothing: a single combined node then
// formats itself with an id of its own, any other node asks for `sluice
// storage format`.
func formatFromEnv(fsys vfs.FS, cfg *config.Config, getenv func(string) (string, bool), logger *slog.Logger) error {
	clusterID, ok := getenv(clusterIDEnv)
	if !ok || clusterID == "" {
		return nil
	}
	dirs := cfg.LogDirs()
	if cfg.IsSet(config.MetadataLogDir) {
		dirs = logdir.AllDirs(dirs, cfg.String(config.MetadataLogDir))
	}
	var formatted int
	for _, dir := range dirs {
		m, err := metafile.ReadMetaProperties(fsys, filepath.Join(dir, metafile.MetaPropertiesFile))
		if vfs.IsNotExist(err) {
			continue
		}
		if err != nil {
			return err // it names the file
		}
		if m.ClusterID != clusterID {
			return fmt.Errorf("log dir %s belongs to cluster %s, but $%s is %s", dir, m.ClusterID, clusterIDEnv, clusterID)
		}
		formatted++
	}
	if formatted > 0 {
		return nil // the node formats the rest with the cluster's id
	}
	if err := logdir.Format(fsys, dirs, clusterID, cfg.NodeID(), false); err != nil {
		return fmt.Errorf("$%s: %w", clusterIDEnv, err)
	}
	for _, dir := range dirs {
		logger.Info("formatted log dir", "dir", dir, "cluster_id", clusterID, "node_id", cfg.NodeID(), "from", "$"+clusterIDEnv)
	}
	return nil
}
