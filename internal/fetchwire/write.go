package fetchwire

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"

	"github.com/sluice-io/sluice/internal/vfs"
)

// copyBufferSize is the buffer for slices that cannot be sent with sendfile.
const copyBufferSize = 64 << 10

// WriteTo writes the body to w.
func (e *Encoded) WriteTo(w io.Writer) (int64, error) { return e.WriteFrame(w, nil) }

// WriteFrame writes head (the frame size and response header) and then the
// body to w. Byte chunks go out with vectored writes; file slices go out with
// sendfile when w is a *net.TCPConn and the file an OS file, else by copying.
// A file shorter than its slice is an error: the frame size is already
// promised, so the caller must close the connection.
func (e *Encoded) WriteFrame(w io.Writer, head []byte) (int64, error) {
	var written int64
	var pending net.Buffers
	if len(head) > 0 {
		pending = append(pending, head)
	}
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		n, err := pending.WriteTo(w)
		written += n
		pending = pending[:0]
		return err
	}
	tcp, _ := w.(*net.TCPConn)
	var buf []byte
	for _, c := range e.chunks {
		if c.slice.File == nil {
			pending = append(pending, e.buf[c.start:c.end])
			continue
		}
		if err := flush(); err != nil {
			return written, err
		}
		var n int64
		var err error
		if f, ok := osFile(c.slice.File); ok && tcp != nil {
			n, err = sendFile(tcp, f, c.slice.Pos, c.slice.Size)
		} else {
			if want := min(copyBufferSize, c.slice.Size); int64(len(buf)) < want {
				buf = make([]byte, want)
			}
			n, err = copySlice(w, c.slice.File, c.slice.Pos, c.slice.Size, buf)
		}
		written += n
		if err != nil {
			return written, fmt.Errorf("streaming records (pos %d, size %d): %w", c.slice.Pos, c.slice.Size, err)
		}
	}
	return written, flush()
}

func osFile(f vfs.File) (*os.File, bool) {
	of, ok := f.(vfs.OSFile)
	if !ok || of.OS() == nil {
		return nil, false
	}
	return of.OS(), true
}

// copySlice copies size bytes from pos through buf with positioned reads, so
// concurrent readers of the same file never share a cursor.
func copySlice(w io.Writer, r io.ReaderAt, pos, size int64, buf []byte) (int64, error) {
	var written int64
	for written < size {
		want := min(int64(len(buf)), size-written)
		n, err := r.ReadAt(buf[:want], pos+written)
		if int64(n) < want {
			if err == nil || errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return written, err
		}
		m, err := w.Write(buf[:n])
		written += int64(m)
		if err != nil {
			return written, err
		}
	}
	return written, nil
}
