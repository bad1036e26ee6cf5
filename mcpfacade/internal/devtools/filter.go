//go:build !(js || wasip1)

package devtools

import (
	"bytes"
	"errors"
	"io"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/chromedp"
)

// Filter copies the messages of a DevTools pipe (JSON texts, each ended by
// one zero byte) from src to dst until src ends, holding at most the bound
// of a message (zero fields of b: the defaults). A message within its bound
// is copied as it is; a larger one is replaced by its error reply, or dropped
// (see the package comment), and reported to logf. A message cut off by the
// end of src is dropped. Filter returns nil at the end of src, or the error
// of a read or a write.
func Filter(dst io.Writer, src io.Reader, b Bounds, logf func(string, ...any)) error {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	f := newFrame(b)
	p := make([]byte, 32<<10)
	for {
		n, err := src.Read(p)
		chunk := p[:n]
		for len(chunk) > 0 {
			i := bytes.IndexByte(chunk, 0)
			if i < 0 {
				f.write(chunk)
				break
			}
			f.write(chunk[:i])
			chunk = chunk[i+1:]
			if werr := f.flush(dst, logf); werr != nil {
				return werr
			}
		}
		if err != nil {
			if f.size > 0 {
				logf("devtools: dropped a message of %d bytes cut off by the end of the pipe", f.size)
			}
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// flush writes the message collected in f, or what replaces it, to dst,
// with its zero byte, and resets f.
func (f *frame) flush(dst io.Writer, logf func(string, ...any)) error {
	defer f.reset()
	if !f.over() {
		if f.size == 0 {
			return nil // chromedp skips empty messages too
		}
		if f.drop(f.buf) {
			return nil // an event only a mirror of the page would use
		}
		// One write: the reader sees the message whole or not at all.
		f.buf = append(f.buf, 0)
		_, err := dst.Write(f.buf)
		return err
	}
	s := f.skip()
	logf("%s", s)
	if s.Reply == nil {
		return nil
	}
	b, err := jsonv2.Marshal(s.Reply, chromedp.DefaultMarshalOptions)
	if err != nil {
		return err
	}
	_, err = dst.Write(append(b, 0))
	return err
}
