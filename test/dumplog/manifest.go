// Package dumplog proves that segments written by internal/commitlog are
// Kafka's: Generate writes a partition log with every batch shape a broker
// stores (each codec, keys, headers, null values, idempotent and
// transactional producers, a commit marker) and describes what it wrote in a
// Manifest; ParseDump reads the text output of Kafka's DumpLogSegments tool;
// Compare lists every disagreement between the two.
package dumplog

// Manifest describes a partition directory written by Generate. Batches and
// records come from the generator's own bookkeeping (what it appended);
// index entries are read back from the files Sluice wrote.
type Manifest struct {
	Dir                string             `json:"dir"`
	SegmentBytes       int64              `json:"segment_bytes"`
	IndexIntervalBytes int                `json:"index_interval_bytes"`
	Segments           []SegmentManifest  `json:"segments"`
	Snapshots          []SnapshotManifest `json:"snapshots"`
}

// SegmentManifest is one segment: its files and contents.
type SegmentManifest struct {
	BaseOffset    int64            `json:"base_offset"`
	LogFile       string           `json:"log_file"`
	IndexFile     string           `json:"index_file"`
	TimeIndexFile string           `json:"time_index_file"`
	LogSize       int64            `json:"log_size"`
	Batches       []BatchManifest  `json:"batches"`
	Index         []IndexEntry     `json:"index"`
	TimeIndex     []TimeIndexEntry `json:"time_index"`
}

// BatchManifest is one record batch as appended, with the offsets the log
// assigned it and its byte position in its segment.
type BatchManifest struct {
	BaseOffset           int64  `json:"base_offset"`
	LastOffset           int64  `json:"last_offset"`
	Count                int32  `json:"count"`
	Position             int64  `json:"position"`
	Size                 int64  `json:"size"`
	Codec                string `json:"codec"`
	CRC                  uint32 `json:"crc"`
	MaxTimestamp         int64  `json:"max_timestamp"`
	ProducerID           int64  `json:"producer_id"`
	ProducerEpoch        int16  `json:"producer_epoch"`
	BaseSequence         int32  `json:"base_sequence"`
	LastSequence         int32  `json:"last_sequence"`
	PartitionLeaderEpoch int32  `json:"partition_leader_epoch"`
	Transactional        bool   `json:"transactional"`
	Control              bool   `json:"control"`
	// Reopened marks the first batch appended after the log was closed
	// and opened again.
	Reopened bool             `json:"reopened,omitempty"`
	Records  []RecordManifest `json:"records"`
}

// RecordManifest is one record. Key and Value are nil when null.
type RecordManifest struct {
	Offset     int64    `json:"offset"`
	Timestamp  int64    `json:"timestamp"`
	Sequence   int32    `json:"sequence"`
	Key        *string  `json:"key"`
	Value      *string  `json:"value"`
	HeaderKeys []string `json:"header_keys"`
	// Marker is set on the record of a transaction marker batch.
	Marker *MarkerManifest `json:"marker,omitempty"`
}

// MarkerManifest is the content of a commit or abort control record.
type MarkerManifest struct {
	Commit           bool  `json:"commit"`
	CoordinatorEpoch int32 `json:"coordinator_epoch"`
}

// IndexEntry is one offset index entry (absolute offset, byte position).
type IndexEntry struct {
	Offset   int64 `json:"offset"`
	Position int64 `json:"position"`
}

// TimeIndexEntry is one time index entry (timestamp, absolute offset).
type TimeIndexEntry struct {
	Timestamp int64 `json:"timestamp"`
	Offset    int64 `json:"offset"`
}

// SnapshotManifest is a producer state snapshot file found after Close and
// the producer state expected in it, computed from the appended batches
// below its offset.
type SnapshotManifest struct {
	Offset    int64                   `json:"offset"`
	File      string                  `json:"file"`
	Producers []ProducerSnapshotEntry `json:"producers"`
}

// ProducerSnapshotEntry is one producer's state as Kafka's snapshot holds
// it: the epoch, transaction fields and the last batch's metadata.
type ProducerSnapshotEntry struct {
	ProducerID            int64 `json:"producer_id"`
	ProducerEpoch         int16 `json:"producer_epoch"`
	CoordinatorEpoch      int32 `json:"coordinator_epoch"`
	CurrentTxnFirstOffset int64 `json:"current_txn_first_offset"`
	LastTimestamp         int64 `json:"last_timestamp"`
	FirstSequence         int32 `json:"first_sequence"`
	LastSequence          int32 `json:"last_sequence"`
	LastOffset            int64 `json:"last_offset"`
	OffsetDelta           int32 `json:"offset_delta"`
	BatchTimestamp        int64 `json:"batch_timestamp"`
}

// Batches returns every batch of every segment, in offset order.
func (m Manifest) Batches() []BatchManifest {
	var out []BatchManifest
	for _, s := range m.Segments {
		out = append(out, s.Batches...)
	}
	return out
}
