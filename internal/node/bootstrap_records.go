package node

import (
	"fmt"
	"path/filepath"

	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/vfs"
)

// BootstrapRecordsFile holds records `sluice storage format` adds to a new
// cluster's first metadata (--add-scram's SCRAM credentials), in the
// metadata log dir, as Kafka's kafka-storage format writes them into its
// bootstrap.checkpoint. The voter that bootstraps the metadata log writes
// them after the cluster id and features; format every controller with the
// same ones.
const BootstrapRecordsFile = "bootstrap.records"

// WriteBootstrapRecords writes recs into cfg's metadata log dir.
func WriteBootstrapRecords(fsys vfs.FS, cfg *config.Config, recs []metadata.Record) error {
	dir := metadataLogDir(cfg)
	if err := fsys.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	if err := vfs.WriteFileAtomic(fsys, filepath.Join(dir, BootstrapRecordsFile), metadata.EncodeRecords(recs)); err != nil {
		return fmt.Errorf("write the bootstrap records: %w", err)
	}
	return nil
}

// formattedBootstrapRecords reads the records format added, if any.
func (n *Node) formattedBootstrapRecords() ([]metadata.Record, error) {
	path := filepath.Join(metadataLogDir(n.cfg), BootstrapRecordsFile)
	data, err := vfs.ReadFile(n.fsys, path)
	if vfs.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	recs, err := metadata.DecodeRecords(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return recs, nil
}
