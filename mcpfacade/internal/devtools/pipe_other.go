//go:build !unix && !(js || wasip1)

package devtools

import "github.com/chromedp/chromedp"

// PipeBounded reports whether BoundPipe bounds a started browser's pipe on
// this platform. On Windows the browser's pipe ends are handles named on
// its command line, which this package does not replace.
const PipeBounded = false

// BoundPipe does nothing on this platform: the pipe is chromedp's, unbounded.
func BoundPipe(b Bounds, logf func(string, ...any)) chromedp.ExecAllocatorOption {
	return func(*chromedp.ExecAllocator) {}
}
