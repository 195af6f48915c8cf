package quorum

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
)

// The raft RPC between voters, on the CONTROLLER listener. Every frame is
// an int32 length (of the bytes after it) and a payload, as Kafka frames
// requests. The dialer's first frame is a hello:
//
//	magic 0xFF 0xFF 'S' 'R'  (read as a Kafka request, api key -1: no Kafka
//	                          request starts so, so one listener serves both)
//	version u16
//	cluster id, then voters as "id@host:port" joined by ",": u16 length + bytes each
//	from, to: i32 node ids
//
// The acceptor answers with magic, version, a status byte (0 accepted,
// 1 refused) and a u16-length reason, and closes the connection when it
// refuses. After an accepted hello the dialer sends message frames: a kind
// byte, then a marshalled raftpb.Message (kindMessage), or, for a message
// larger than one frame, pieces of it (kindChunk ... kindLastChunk).

// RPCMagic opens the hello frame's payload.
var RPCMagic = [4]byte{0xFF, 0xFF, 'S', 'R'}

const (
	rpcVersion = 0

	kindMessage   = 1
	kindChunk     = 2
	kindLastChunk = 3

	helloAccepted = 0
	helloRefused  = 1

	// maxFrameBytes bounds one frame; larger messages go in chunks.
	maxFrameBytes = 4 << 20
	// chunkBytes is the size of one chunk of a large message.
	chunkBytes = 1 << 20
	// maxHelloBytes bounds the hello and its reply.
	maxHelloBytes = 64 << 10
)

// IsRPCPrefix reports whether the first bytes of a connection (at least 8:
// the frame length and the payload's first 4) open our raft RPC rather
// than a Kafka request. A listener shared with Kafka clients calls it to
// hand the connection to TCPTransport.ServeConn.
func IsRPCPrefix(prefix []byte) bool {
	return len(prefix) >= 8 && bytes.Equal(prefix[4:8], RPCMagic[:])
}

// ErrBadFrame wraps every malformed frame from a peer.
var ErrBadFrame = errors.New("quorum: malformed raft RPC frame")

type hello struct {
	version   uint16
	clusterID string
	voters    string
	from, to  int32
}

func appendString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

func readString(p []byte) (string, []byte, error) {
	if len(p) < 2 {
		return "", nil, fmt.Errorf("%w: truncated string", ErrBadFrame)
	}
	n := int(binary.BigEndian.Uint16(p))
	if len(p) < 2+n {
		return "", nil, fmt.Errorf("%w: string of %d bytes in %d", ErrBadFrame, n, len(p)-2)
	}
	return string(p[2 : 2+n]), p[2+n:], nil
}

func (h hello) encode() []byte {
	b := append([]byte(nil), RPCMagic[:]...)
	b = binary.BigEndian.AppendUint16(b, h.version)
	b = appendString(b, h.clusterID)
	b = appendString(b, h.voters)
	b = binary.BigEndian.AppendUint32(b, uint32(h.from))
	return binary.BigEndian.AppendUint32(b, uint32(h.to))
}

func decodeHello(p []byte) (hello, error) {
	var h hello
	if len(p) < 6 || !bytes.Equal(p[:4], RPCMagic[:]) {
		return h, fmt.Errorf("%w: not a raft RPC hello", ErrBadFrame)
	}
	h.version = binary.BigEndian.Uint16(p[4:])
	var err error
	p = p[6:]
	if h.clusterID, p, err = readString(p); err != nil {
		return h, err
	}
	if h.voters, p, err = readString(p); err != nil {
		return h, err
	}
	if len(p) != 8 {
		return h, fmt.Errorf("%w: hello ends with %d bytes, want 8", ErrBadFrame, len(p))
	}
	h.from, h.to = int32(binary.BigEndian.Uint32(p)), int32(binary.BigEndian.Uint32(p[4:]))
	return h, nil
}

func encodeHelloReply(status byte, reason string) []byte {
	b := append([]byte(nil), RPCMagic[:]...)
	b = binary.BigEndian.AppendUint16(b, rpcVersion)
	b = append(b, status)
	return appendString(b, reason)
}

func decodeHelloReply(p []byte) (status byte, reason string, err error) {
	if len(p) < 7 || !bytes.Equal(p[:4], RPCMagic[:]) {
		return 0, "", fmt.Errorf("%w: not a raft RPC hello reply", ErrBadFrame)
	}
	status = p[6]
	reason, rest, err := readString(p[7:])
	if err == nil && len(rest) != 0 {
		err = fmt.Errorf("%w: %d bytes after the hello reply", ErrBadFrame, len(rest))
	}
	return status, reason, err
}

// writeFrame writes one length-prefixed frame.
func writeFrame(w io.Writer, payload ...[]byte) error {
	n := 0
	for _, p := range payload {
		n += len(p)
	}
	buf := make([]byte, 4, 4+n)
	binary.BigEndian.PutUint32(buf, uint32(n))
	for _, p := range payload {
		buf = append(buf, p...)
	}
	_, err := w.Write(buf)
	return err
}

// readFrame reads one frame of at most limit bytes.
func readFrame(r io.Reader, limit int) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(size[:]))
	if n < 1 || int(n) > limit {
		return nil, fmt.Errorf("%w: frame of %d bytes (limit %d)", ErrBadFrame, n, limit)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

// writeMessage writes a marshalled message as one frame or as chunks.
func writeMessage(w io.Writer, data []byte) error {
	if len(data) < maxFrameBytes {
		return writeFrame(w, []byte{kindMessage}, data)
	}
	for len(data) > 0 {
		n := min(chunkBytes, len(data))
		kind := byte(kindChunk)
		if n == len(data) {
			kind = kindLastChunk
		}
		if err := writeFrame(w, []byte{kind}, data[:n]); err != nil {
			return err
		}
		data = data[n:]
	}
	return nil
}

// readMessage reads the next whole marshalled message, joining chunks up
// to maxMessage bytes.
func readMessage(r io.Reader, maxMessage int) ([]byte, error) {
	var assembled []byte
	for {
		f, err := readFrame(r, maxFrameBytes)
		if err != nil {
			return nil, err
		}
		kind, body := f[0], f[1:]
		switch {
		case kind == kindMessage && assembled == nil:
			return body, nil
		case kind == kindChunk || kind == kindLastChunk:
			if len(assembled)+len(body) > maxMessage {
				return nil, fmt.Errorf("%w: chunked message above %d bytes", ErrBadFrame, maxMessage)
			}
			assembled = append(slices.Clip(assembled), body...)
			if kind == kindLastChunk {
				return assembled, nil
			}
		default:
			return nil, fmt.Errorf("%w: frame kind %d", ErrBadFrame, kind)
		}
	}
}
