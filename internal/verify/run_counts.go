package verify

import (
	"bytes"
	"io"
	"sync"
)

// opCounts are the history's ops of the kinds the progress line shows.
type opCounts struct{ acks, polls, fails, infos int64 }

// opCounter counts ops by kind in the history's JSON lines as the
// Recorder writes them, so the progress line costs nothing per op beyond
// a scan of bytes already produced (copying the Recorder's ops would cost
// the whole history every time).
type opCounter struct {
	mu sync.Mutex
	n  opCounts
	// tail is the end of the previous write, so a pattern split between
	// two writes is still found once.
	tail []byte
}

// The patterns: the Recorder writes an op's kind as "kind":"<kind>".
var (
	patAck  = []byte(`"kind":"ack"`)
	patPoll = []byte(`"kind":"poll"`)
	patFail = []byte(`"kind":"fail"`)
	patInfo = []byte(`"kind":"info"`)
)

// patMax is the longest pattern's length.
const patMax = 13

// wrap returns a writer that counts what passes to w.
func (c *opCounter) wrap(w io.Writer) io.Writer {
	return writerFunc(func(p []byte) (int, error) {
		c.count(p)
		return w.Write(p)
	})
}

func (c *opCounter) count(p []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	buf := append(c.tail, p...)
	// A match lying wholly in the old tail was counted with the previous
	// write; count only those ending in p.
	skip := len(c.tail)
	c.n.acks += countFrom(buf, patAck, skip)
	c.n.polls += countFrom(buf, patPoll, skip)
	c.n.fails += countFrom(buf, patFail, skip)
	c.n.infos += countFrom(buf, patInfo, skip)
	keep := min(len(buf), patMax-1)
	c.tail = append(c.tail[:0], buf[len(buf)-keep:]...)
}

// countFrom counts the matches of pat in buf that end after buf[skip].
func countFrom(buf, pat []byte, skip int) int64 {
	var n int64
	for i := 0; ; {
		j := bytes.Index(buf[i:], pat)
		if j < 0 {
			return n
		}
		if i+j+len(pat) > skip {
			n++
		}
		i += j + len(pat)
	}
}

func (c *opCounter) snapshot() opCounts {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
