package metafile

import "testing"

func FuzzParsePartitionMetadata(f *testing.F) {
	f.Add([]byte("version: 0\ntopic_id: bf2Yc2K1TNa3yNsmYLxlzw\n"))
	f.Add([]byte("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		id, err := ParsePartitionMetadata("fuzz", data)
		if err != nil {
			return
		}
		again, err := ParsePartitionMetadata("fuzz", FormatPartitionMetadata(id))
		if err != nil || again != id {
			t.Fatalf("round trip of %s = %s, %v", id, again, err)
		}
	})
}

func FuzzParseMetaProperties(f *testing.F) {
	f.Add([]byte("version=1\nnode.id=1\ncluster.id=MkU3OEVBNTcwNTJENDM2Qk\ndirectory.id=bf2Yc2K1TNa3yNsmYLxlzw\n"))
	f.Add([]byte("version=0\nbroker.id=7\n"))
	f.Add([]byte("version = 1\nnode.id : 1\ncluster.id\\=x=y\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseMetaProperties("fuzz", data)
		if err != nil {
			return
		}
		text, err := FormatMetaProperties(m)
		if err != nil {
			return // read fine, but holds a value our writer refuses to write unescaped
		}
		again, err := ParseMetaProperties("fuzz", text)
		if err != nil || again != m {
			t.Fatalf("round trip of %+v = %+v, %v", m, again, err)
		}
	})
}
