package metafile

import (
	"errors"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/vfs"
)

func TestPartitionMetadataRoundTrip(t *testing.T) {
	m := vfs.NewMem()
	id, err := kafka.RandomUUID()
	if err != nil {
		t.Fatal(err)
	}
	path := "/" + PartitionMetadataFile
	if err := WritePartitionMetadata(m, path, id); err != nil {
		t.Fatal(err)
	}
	m.Crash() // the write is durable when it returns
	got, err := ReadPartitionMetadata(m, path)
	if err != nil || got != id {
		t.Fatalf("Read = %s, %v; want %s", got, err, id)
	}
	data, _ := vfs.ReadFile(m, path)
	if want := "version: 0\ntopic_id: " + id.String() + "\n"; string(data) != want {
		t.Fatalf("file %q, want %q", data, want)
	}
	if err := WritePartitionMetadata(m, path, kafka.UUID{}); err == nil {
		t.Fatal("zero topic id written")
	}
}

func TestParsePartitionMetadataAsKafka(t *testing.T) {
	// Written by Kafka for a topic; a newer version and a missing final newline are accepted.
	for _, text := range []string{
		"version: 0\ntopic_id: bf2Yc2K1TNa3yNsmYLxlzw\n",
		"version: 1\ntopic_id:\tbf2Yc2K1TNa3yNsmYLxlzw",
	} {
		id, err := ParsePartitionMetadata("p", []byte(text))
		if err != nil || id.String() != "bf2Yc2K1TNa3yNsmYLxlzw" {
			t.Fatalf("Parse(%q) = %s, %v", text, id, err)
		}
	}
	bad := map[string]string{
		"": "line 1",
		"version 0\ntopic_id: bf2Yc2K1TNa3yNsmYLxlzw":   "line 1",
		"version:0\ntopic_id: bf2Yc2K1TNa3yNsmYLxlzw":   "line 1",
		"version: -1\ntopic_id: bf2Yc2K1TNa3yNsmYLxlzw": "line 1",
		"version: x\ntopic_id: bf2Yc2K1TNa3yNsmYLxlzw":  "line 1",
		"version: 0\n":                "line 2",
		"version: 0":                  "line 2",
		"version: 0\ntopic: abc\n":    "line 2",
		"version: 0\ntopic_id: abc\n": "line 2",
		"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA\n": "line 2",
	}
	for text, line := range bad {
		_, err := ParsePartitionMetadata("/d/partition.metadata", []byte(text))
		if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "/d/partition.metadata: "+line) {
			t.Errorf("Parse(%q) = %v, want malformed at %s", text, err, line)
		}
	}
}

func TestMetaPropertiesRoundTrip(t *testing.T) {
	m := vfs.NewMem()
	dir, err := kafka.RandomUUID()
	if err != nil {
		t.Fatal(err)
	}
	want := MetaProperties{Version: MetaPropertiesV1, ClusterID: "MkU3OEVBNTcwNTJENDM2Qk", NodeID: 3, DirectoryID: dir}
	path := "/" + MetaPropertiesFile
	if err := WriteMetaProperties(m, path, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadMetaProperties(m, path)
	if err != nil || got != want {
		t.Fatalf("Read = %+v, %v; want %+v", got, err, want)
	}
	if _, err := ReadMetaProperties(m, "/nope"); !vfs.IsNotExist(err) {
		t.Fatalf("missing file = %v", err)
	}
}

func TestFormatMetaPropertiesRefuses(t *testing.T) {
	for _, m := range []MetaProperties{
		{Version: 2, ClusterID: "c", NodeID: 1},
		{Version: 1, NodeID: 1},
		{Version: 1, ClusterID: "c", NodeID: -1},
		{Version: 1, ClusterID: "has space", NodeID: 1},
		{Version: 1, ClusterID: `back\slash`, NodeID: 1},
	} {
		if _, err := FormatMetaProperties(m); err == nil {
			t.Errorf("FormatMetaProperties(%+v) succeeded", m)
		}
	}
}

func TestParseMetaPropertiesWrittenByKafka(t *testing.T) {
	const kafkaFile = "#\n#Sun Nov 29 10:00:00 UTC 2026\nnode.id=1\ndirectory.id=bf2Yc2K1TNa3yNsmYLxlzw\nversion=1\ncluster.id=MkU3OEVBNTcwNTJENDM2Qk\n"
	got, err := ParseMetaProperties("m", []byte(kafkaFile))
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 1 || got.NodeID != 1 || got.ClusterID != "MkU3OEVBNTcwNTJENDM2Qk" || got.DirectoryID.String() != "bf2Yc2K1TNa3yNsmYLxlzw" {
		t.Fatalf("parsed %+v", got)
	}
	v0, err := ParseMetaProperties("m", []byte("version=0\nbroker.id=7\n"))
	if err != nil || v0.Version != 0 || v0.NodeID != 7 || v0.ClusterID != "" {
		t.Fatalf("v0 = %+v, %v", v0, err)
	}
	noVersion, err := ParseMetaProperties("m", []byte("cluster.id=x\n"))
	if err != nil || noVersion.Version != 0 || noVersion.NodeID != -1 {
		t.Fatalf("no version = %+v, %v", noVersion, err)
	}
}

func TestParseMetaPropertiesRejects(t *testing.T) {
	for _, text := range []string{
		"version=2\nnode.id=1\ncluster.id=c\n",
		"version=1\ncluster.id=c\n",
		"version=1\nnode.id=1\n",
		"version=1\nnode.id=x\ncluster.id=c\n",
		"version=1\nnode.id=1\ncluster.id=c\ndirectory.id=nope\n",
		"version=1\nnode.id=1\ncluster.id=c\nbad=\\u12\n",
	} {
		_, err := ParseMetaProperties("/logs/meta.properties", []byte(text))
		if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "/logs/meta.properties") {
			t.Errorf("Parse(%q) = %v, want malformed naming the file", text, err)
		}
	}
}
