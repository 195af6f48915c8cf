package fetchwire

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
)

// maxSendfileChunk bounds one sendfile call; Linux transfers at most
// 0x7ffff000 bytes per call anyway.
const maxSendfileChunk = 1 << 30

// sendFile sends size bytes of f from pos to the socket with sendfile(2),
// at an explicit offset so the file's shared cursor is never moved. The
// socket's write deadline applies: the runtime poller waits for
// writability between partial sends.
func sendFile(dst *net.TCPConn, f *os.File, pos, size int64) (int64, error) {
	dstRaw, err := dst.SyscallConn()
	if err != nil {
		return 0, err
	}
	srcRaw, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var written int64
	var sendErr error
	controlErr := srcRaw.Control(func(srcFD uintptr) {
		writeErr := dstRaw.Write(func(dstFD uintptr) bool {
			for written < size {
				offset := pos + written
				n, err := syscall.Sendfile(int(dstFD), int(srcFD), &offset, int(min(size-written, maxSendfileChunk)))
				if n > 0 {
					written += int64(n)
				}
				switch {
				case errors.Is(err, syscall.EAGAIN):
					return false // wait until the socket is writable
				case errors.Is(err, syscall.EINTR):
					continue
				case err != nil:
					sendErr = err
					return true
				case n == 0:
					// The file ends before the slice does.
					sendErr = io.ErrUnexpectedEOF
					return true
				}
			}
			return true
		})
		if sendErr == nil {
			sendErr = writeErr
		}
	})
	if sendErr == nil {
		sendErr = controlErr
	}
	return written, sendErr
}
