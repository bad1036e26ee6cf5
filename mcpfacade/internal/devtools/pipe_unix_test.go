//go:build unix

package devtools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
)

// fakeBrowserEnv makes the test binary a browser that speaks DevTools on
// its pipe (descriptors 3 and 4), for the exec allocator to start.
const fakeBrowserEnv = "DEVTOOLS_FAKE_PIPE_BROWSER"

func TestMain(m *testing.M) {
	if os.Getenv(fakeBrowserEnv) != "" {
		fakePipeBrowser()
		return
	}
	os.Exit(m.Run())
}

// fakePipeBrowser answers every command; before the answer to
// Browser.getVersion it sends a 5 MiB event, the answer to
// Browser.getBrowserCommandLine is 3 MiB, Browser.crash makes it exit
// without an answer, and Browser.close answers and exits.
func fakePipeBrowser() {
	in := bufio.NewReader(os.NewFile(3, "in"))
	out := os.NewFile(4, "out")
	send := func(s string) {
		if _, err := out.WriteString(s + "\x00"); err != nil {
			os.Exit(3)
		}
	}
	for {
		b, err := in.ReadBytes(0)
		if err != nil {
			os.Exit(0) // the pipe closed: as Chromium, exit
		}
		var cmd struct {
			ID     int64  `json:"id"`
			Method string `json:"method"`
		}
		if err := json.Unmarshal(bytes.TrimSuffix(b, []byte{0}), &cmd); err != nil {
			os.Exit(2)
		}
		switch cmd.Method {
		case browser.CommandGetVersion:
			send(bigEvent(5<<20, ""))
			send(fmt.Sprintf(`{"id":%d,"result":{"protocolVersion":"1.3","product":"Fake/1"}}`, cmd.ID))
		case browser.CommandGetBrowserCommandLine:
			send(bigReply(3<<20, int(cmd.ID), ""))
		case browser.CommandCrash:
			os.Exit(1)
		case browser.CommandClose:
			send(fmt.Sprintf(`{"id":%d,"result":{}}`, cmd.ID))
			os.Exit(0)
		default:
			send(fmt.Sprintf(`{"id":%d,"result":{}}`, cmd.ID))
		}
	}
}

// openFDs counts this process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	dir := "/proc/self/fd"
	if runtime.GOOS == "darwin" {
		dir = "/dev/fd"
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

// startFake starts the fake browser through chromedp's exec allocator,
// with its pipe bounded at 1 MiB.
func startFake(t *testing.T, log *logLines) (context.Context, func()) {
	t.Helper()
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(os.Args[0]),
		chromedp.Env(fakeBrowserEnv+"=1"),
		BoundPipe(Bounds{Reply: 1 << 20, Event: 1 << 20}, log.logf),
	)
	ctx, cancel := chromedp.NewContext(allocCtx)
	return ctx, func() { cancel(); cancelAlloc() }
}

// Through chromedp's exec allocator and its pipe: the oversized event is
// dropped before chromedp reads it, the oversized reply fails its command
// at once naming the bound, and when the browser goes every descriptor and
// the filter are gone.
func TestBoundPipeThroughChromedp(t *testing.T) {
	before := openFDs(t)
	var log logLines
	ctx, stop := startFake(t, &log)
	tctx, cancelT := context.WithTimeout(ctx, 20*time.Second)
	defer cancelT()
	v, err := chromedp.CallBrowser(tctx, browser.GetVersion, cdp.Empty{})
	if err != nil || v.Product != "Fake/1" {
		t.Fatalf("getVersion after a 5 MiB event: %+v %v\n%s", v, err, log.String())
	}
	_, err = chromedp.CallBrowser(tctx, browser.GetBrowserCommandLine, cdp.Empty{})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%d bytes is larger than the bound of %d bytes", 3<<20, 1<<20)) {
		t.Fatalf("a 3 MiB reply gave %v", err)
	}
	if tctx.Err() != nil {
		t.Fatalf("the command waited for the deadline: %v", tctx.Err())
	}
	for _, want := range []string{"(event Runtime.consoleAPICalled)", "(reply to "} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}
	stop()
	waitFDs(t, before)
}

// A browser that exits on its own ends the connection through the filter:
// chromedp sees it lost, and nothing is left open.
func TestBoundPipeBrowserExit(t *testing.T) {
	before := openFDs(t)
	var log logLines
	ctx, stop := startFake(t, &log)
	defer stop()
	tctx, cancelT := context.WithTimeout(ctx, 20*time.Second)
	defer cancelT()
	if _, err := chromedp.CallBrowser(tctx, browser.GetVersion, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	lost := chromedp.FromContext(ctx).Browser.LostConnection
	_, err := chromedp.CallBrowser(tctx, browser.Crash, cdp.Empty{})
	if err == nil {
		t.Fatal("a browser that exited answered")
	}
	select {
	case <-lost:
	case <-time.After(10 * time.Second):
		t.Fatal("the connection outlived the browser")
	}
	stop()
	waitFDs(t, before)
}

// A browser that cannot start leaves nothing open either.
func TestBoundPipeStartFails(t *testing.T) {
	before := openFDs(t)
	var log logLines
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath("/nonexistent/browser"), BoundPipe(Bounds{Reply: 1 << 20, Event: 1 << 20}, log.logf))
	ctx, cancel := chromedp.NewContext(allocCtx)
	if err := chromedp.Do(ctx); err == nil {
		t.Fatal("a missing browser started")
	}
	cancel()
	cancelAlloc()
	waitFDs(t, before)
}

// waitFDs waits until no more descriptors are open than before: the filter
// closes its own when the browser's pipe ends.
func waitFDs(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := openFDs(t)
		if n <= before {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d descriptors open, %d before", n, before)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
