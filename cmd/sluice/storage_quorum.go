package main

import (
	"fmt"
	"path/filepath"

	"github.com/sluice-io/sluice/internal/cli"
	"github.com/sluice-io/sluice/internal/commitlog/metafile"
	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/quorum"
	"github.com/sluice-io/sluice/internal/vfs"
)

// formatNode is what `storage format`'s quorum flags are checked against.
func formatNode(cfg *config.Config, dirID kafka.UUID) cli.FormatNode {
	n := cli.FormatNode{NodeID: cfg.NodeID(), Controller: cfg.HasRole(config.RoleController), StaticVoters: len(cfg.Voters()) > 0, MetadataDirID: dirID}
	if names := cfg.ControllerListenerNames(); len(names) > 0 {
		n.ListenerName = names[0]
	}
	for _, l := range cfg.AdvertisedControllerListeners() {
		n.Advertised = append(n.Advertised, quorum.Endpoint{Name: l.Name, Host: l.Host, Port: int32(l.Port)})
	}
	return n
}

func metadataDir(cfg *config.Config) string {
	if cfg.IsSet(config.MetadataLogDir) {
		return cfg.String(config.MetadataLogDir)
	}
	return cfg.LogDirs()[0]
}

// writeBootstrapVoters writes a dynamic controller's bootstrap-voters.json
// into its metadata log partition directory and gives the metadata log
// dir the directory id --initial-controllers names for this node, as
// Kafka's Formatter does. A dir that was already formatted is left alone.
func writeBootstrapVoters(fsys vfs.FS, cfg *config.Config, qf cli.QuorumFormat, skipped map[string]metafile.MetaProperties) error {
	dir := metadataDir(cfg)
	if _, ok := skipped[dir]; ok {
		return nil
	}
	path := filepath.Join(dir, metafile.MetaPropertiesFile)
	mp, err := metafile.ReadMetaProperties(fsys, path)
	if err != nil {
		return err
	}
	b, dirID, err := qf.BootstrapVoters(formatNode(cfg, mp.DirectoryID))
	if err != nil || b == nil {
		return err
	}
	if dirID != mp.DirectoryID {
		mp.DirectoryID = dirID
		if err := metafile.WriteMetaProperties(fsys, path, mp); err != nil {
			return err
		}
	}
	if err := quorum.WriteBootstrapVoters(fsys, filepath.Join(dir, quorum.MetadataPartition().String()), *b); err != nil {
		return fmt.Errorf("format %s: %w", dir, err)
	}
	return nil
}
