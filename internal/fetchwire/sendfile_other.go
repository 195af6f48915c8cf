//go:build !linux

package fetchwire

import (
	"net"
	"os"
)

// sendFile copies on systems where Sluice does not use sendfile(2).
func sendFile(dst *net.TCPConn, f *os.File, pos, size int64) (int64, error) {
	buf := make([]byte, min(copyBufferSize, size))
	return copySlice(dst, f, pos, size, buf)
}
