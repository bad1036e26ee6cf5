package nativehost

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Bounds of one message in the browser's native messaging framing: a
// 32-bit length in the machine's byte order, then that many bytes of UTF-8
// JSON.
const (
	// MaxToBrowser is the largest message the browser accepts from a host
	// (1 MiB); a larger one makes it close the connection.
	MaxToBrowser = 1 << 20
	// MaxFromBrowser bounds a message read from the browser. A page reply
	// is at most client.DefaultMaxReplyBytes as text, and JSON may write a
	// character as six; 16 MiB holds that with room to spare.
	MaxFromBrowser = 16 << 20
)

// ErrTooLarge is what ReadMessage and WriteMessage return for a message
// over their bound. After a read refused so, the stream cannot be read on.
var ErrTooLarge = errors.New("nativehost: message larger than the bound")

// ReadMessage reads one framed message of at most max bytes. A longer
// message is refused from its length alone, before anything is held.
func ReadMessage(r io.Reader, max int) ([]byte, error) {
	var h [4]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, err
	}
	n := binary.NativeEndian.Uint32(h[:])
	if uint64(n) > uint64(max) {
		return nil, fmt.Errorf("%w: %d bytes announced, %d allowed", ErrTooLarge, n, max)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return b, nil
}

// WriteMessage writes b as one framed message, refusing it when it is
// longer than max.
func WriteMessage(w io.Writer, b []byte, max int) error {
	if len(b) > max {
		return fmt.Errorf("%w: %d bytes, %d allowed", ErrTooLarge, len(b), max)
	}
	buf := make([]byte, 4+len(b))
	binary.NativeEndian.PutUint32(buf, uint32(len(b)))
	copy(buf[4:], b)
	_, err := w.Write(buf)
	return err
}
