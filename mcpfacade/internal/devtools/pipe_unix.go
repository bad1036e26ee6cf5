//go:build unix && !(js || wasip1)

package devtools

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"github.com/chromedp/chromedp"
	"golang.org/x/sys/unix"
)

// PipeBounded reports whether BoundPipe bounds a started browser's pipe on
// this platform.
const PipeBounded = true

// BoundPipe is an ExecAllocatorOption that bounds every message a started
// browser writes to its DevTools pipe at b (zero fields: the defaults),
// before chromedp reads it (see Filter). It replaces
// chromedp's default ModifyCmdFunc and does what that did: on Linux the
// browser is killed when this process dies.
//
// The browser writes to its file descriptor 4, which chromedp gives it as
// cmd.ExtraFiles[1], the write end of the pipe chromedp reads. BoundPipe
// gives it instead the write end of a new pipe, read by a goroutine that
// runs Filter into a duplicate of chromedp's write end. The new write end
// takes over the descriptor of chromedp's (dup2), so that chromedp's own
// closing of the child's ends after the start, or after a failed start,
// closes it too: when the browser exits, whether chromedp saw it start or
// not, the filter reads the end of its pipe and closes its write end, and
// chromedp reads the end of the connection as before. When chromedp closes
// its read end, the filter's next write fails and it stops, closing the
// browser's pipe.
func BoundPipe(b Bounds, logf func(string, ...any)) chromedp.ExecAllocatorOption {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	return chromedp.ModifyCmdFunc(func(cmd *exec.Cmd) {
		killWithParent(cmd)
		if err := interpose(cmd, b, logf); err != nil {
			// Never run the browser with an unbounded pipe.
			cmd.Err = fmt.Errorf("devtools: bound the browser's pipe: %w", err)
		}
	})
}

func interpose(cmd *exec.Cmd, b Bounds, logf func(string, ...any)) error {
	if len(cmd.ExtraFiles) != 2 || cmd.ExtraFiles[1] == nil {
		return errors.New("the browser has no DevTools pipe (is it started with a websocket?)")
	}
	childW := cmd.ExtraFiles[1]
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer w.Close() // the browser's end lives on in childW's descriptor
	var out *os.File
	var opErr error
	ctl := func(dst, src uintptr) {
		// Hold off forks while the descriptor has no close-on-exec flag,
		// so that no other child inherits the browser's pipe.
		syscall.ForkLock.RLock()
		defer syscall.ForkLock.RUnlock()
		dup, err := unix.FcntlInt(dst, unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			opErr = err
			return
		}
		if err := unix.Dup2(int(src), int(dst)); err != nil {
			unix.Close(dup)
			opErr = err
			return
		}
		unix.CloseOnExec(int(dst))
		// The browser expects a blocking descriptor, as chromedp's was.
		if err := unix.SetNonblock(int(dst), false); err != nil {
			opErr = err
		}
		out = os.NewFile(uintptr(dup), "devtools-pipe")
	}
	if err := control2(childW, w, ctl); err != nil {
		r.Close()
		return err
	}
	if opErr != nil {
		r.Close()
		if out != nil {
			out.Close()
		}
		return opErr
	}
	go func() {
		defer r.Close()
		defer out.Close()
		if err := Filter(out, r, b, logf); err != nil {
			logf("devtools: the browser's pipe: %v", err)
		}
	}()
	return nil
}

// control2 runs f with the descriptors of a and b, each held open.
func control2(a, b *os.File, f func(fa, fb uintptr)) error {
	ca, err := a.SyscallConn()
	if err != nil {
		return err
	}
	cb, err := b.SyscallConn()
	if err != nil {
		return err
	}
	var inner error
	err = ca.Control(func(fa uintptr) {
		inner = cb.Control(func(fb uintptr) { f(fa, fb) })
	})
	if err != nil {
		return err
	}
	return inner
}
