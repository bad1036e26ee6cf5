package e2e

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// testTimeout bounds one test's work in its tab. It is generous on purpose:
// the machine is shared, and the tests assert behaviour, never speed.
const testTimeout = 90 * time.Second

// agentJS is the external agent, injected into an isolated world.
//
//go:embed testdata/agent.js
var agentJS string

// tab is one browser tab of one test.
type tab struct {
	ctx context.Context // carries the test's deadline

	mu       sync.Mutex
	problems []string // page exceptions and console errors, in order

	world runtime.ExecutionContextID // the agent's isolated world
}

// openTab opens a new tab on url and fails the test, at its end, on every
// page exception and console error the tab reported.
func openTab(t *testing.T, url string) *tab {
	t.Helper()
	return openTabFirst(t, url, "")
}

// openHarness opens the bare harness page, whose tests load the surface
// themselves, and waits until it is ready.
func openHarness(t *testing.T) *tab {
	t.Helper()
	p := openTab(t, siteURL+"/e2e/harness.html")
	waitPage(t, p, `window.__e2e && window.__e2e.ready`)
	return p
}

// openTabFirst is openTab with first, when not empty, run in the page's
// world before any script of the document (and of every later one).
func openTabFirst(t *testing.T, url, first string) *tab {
	t.Helper()
	tabCtx, cancelTab := chromedp.NewContext(browser)
	// The first Run opens the tab; the tab lives as long as tabCtx, so the
	// deadline goes on a child context.
	if err := chromedp.Do(tabCtx); err != nil {
		cancelTab()
		t.Fatalf("open tab: %v", err)
	}
	ctx, cancel := context.WithTimeout(tabCtx, testTimeout)
	p := &tab{ctx: ctx}
	t.Cleanup(func() {
		cancel()
		cancelTab()
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, msg := range p.problems {
			t.Errorf("page reported: %s", msg)
		}
	})
	if err := chromedp.Listen(tabCtx, p.onEvent); err != nil {
		t.Fatalf("listen: %v", err)
	}
	if first != "" {
		if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: first}); err != nil {
			t.Fatalf("add the first script: %v", err)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("navigate to %s: %v", url, err)
	}
	return p
}

// onEvent runs on the tab's reading goroutine: it only records.
func (p *tab) onEvent(ev any) {
	var msg string
	switch ev := ev.(type) {
	case *runtime.EventExceptionThrown:
		msg = "exception: " + exceptionText(ev.ExceptionDetails)
	case *runtime.EventConsoleAPICalled:
		if ev.Type != runtime.ConsoleAPICalledTypeError && ev.Type != runtime.ConsoleAPICalledTypeAssert {
			return
		}
		msg = "console." + string(ev.Type) + ": " + argsText(ev.Args)
	case *log.EventEntryAdded:
		if ev.Entry == nil || ev.Entry.Level != log.EntryLevelError {
			return
		}
		msg = "log (" + string(ev.Entry.Source) + "): " + ev.Entry.Text
		if ev.Entry.URL != "" {
			msg += " [" + ev.Entry.URL + "]"
		}
	default:
		return
	}
	p.mu.Lock()
	p.problems = append(p.problems, msg)
	p.mu.Unlock()
}

func exceptionText(d *runtime.ExceptionDetails) string {
	if d == nil {
		return "(no details)"
	}
	s := d.Text
	if d.Exception != nil && d.Exception.Description != "" {
		s += " " + d.Exception.Description
	}
	if d.URL != "" {
		s += fmt.Sprintf(" at %s:%d:%d", d.URL, d.LineNumber+1, d.ColumnNumber+1)
	}
	return s
}

func argsText(args []*runtime.RemoteObject) string {
	parts := make([]string, 0, len(args))
	for _, a := range args {
		switch {
		case len(a.Value) > 0:
			var s string
			if json.Unmarshal(a.Value, &s) == nil {
				parts = append(parts, s)
			} else {
				parts = append(parts, string(a.Value))
			}
		case a.Description != "":
			parts = append(parts, a.Description)
		default:
			parts = append(parts, string(a.Type))
		}
	}
	return strings.Join(parts, " ")
}

// evalPage evaluates expr in the page's own JavaScript world (what the page
// author's code sees), awaiting a returned promise, and decodes the JSON value.
func evalPage[T any](t testing.TB, p *tab, expr string) T {
	t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("page: %s: %v", short(expr), err)
	}
	return v
}

// waitPage polls expr in the page's world until it is truthy. It polls in
// the page rather than with chromedp.Poll, which evaluates in whichever
// execution context of the frame was created last: after startAgent that is
// the agent's isolated world, where the page's globals do not exist.
func waitPage(t testing.TB, p *tab, expr string) {
	t.Helper()
	_, err := chromedp.Run(p.ctx, chromedp.Evaluate[bool](`new Promise((resolve, reject) => {
		const deadline = Date.now() + `+fmt.Sprint(testTimeout.Milliseconds())+`;
		let last;
		const look = () => {
			try {
				if (`+expr+`) return resolve(true);
			} catch (err) {
				last = err;
			}
			if (Date.now() > deadline) return reject(new Error("still false" + (last ? ": " + last : "")));
			setTimeout(look, 25);
		};
		look();
	})`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("waiting for %s: %v", short(expr), err)
	}
}

// startAgent creates the agent's isolated world on the main frame, the way a
// browser extension's content script gets one: it shares the DOM and the
// window's message events with the page, not the page's JavaScript globals,
// and what it posts arrives as trusted messages from the page's own origin.
func (p *tab) startAgent(t testing.TB) {
	t.Helper()
	tree, err := chromedp.Call(p.ctx, page.GetFrameTree, cdp.Empty{})
	if err != nil {
		t.Fatalf("frame tree: %v", err)
	}
	w, err := chromedp.Call(p.ctx, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{
		FrameID:   tree.FrameTree.Frame.ID,
		WorldName: "pling-e2e-agent",
	})
	if err != nil {
		t.Fatalf("isolated world: %v", err)
	}
	p.world = w.ExecutionContextID
	evalAgent[chromedp.Void](t, p, agentJS)
	// The page's globals must not be reachable from here, or this would not
	// be a content script.
	if leaked := evalAgent[bool](t, p, `typeof window.__demo !== "undefined" || typeof window.__e2e !== "undefined"`); leaked {
		t.Fatal("the agent world sees the page's globals: it is not isolated")
	}
}

// evalAgent evaluates expr in the agent's isolated world, awaiting a
// returned promise, and decodes the JSON value.
func evalAgent[T any](t testing.TB, p *tab, expr string) T {
	t.Helper()
	v, err := tryAgent[T](p, expr)
	if err != nil {
		t.Fatalf("agent: %s: %v", short(expr), err)
	}
	return v
}

// tryAgent is evalAgent that returns the error (a rejected promise included).
func tryAgent[T any](p *tab, expr string) (T, error) {
	if p.world == 0 {
		var zero T
		return zero, errors.New("startAgent was not called")
	}
	return chromedp.Run(p.ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise, func(e *runtime.EvaluateParams) {
		e.ContextID = p.world
	}))
}

// sleep waits d in the tab's context. It is used only to give a message that
// must NOT be answered time to be answered anyway, never to assert speed.
func (p *tab) sleep(t testing.TB, d time.Duration) {
	t.Helper()
	if err := chromedp.Do(p.ctx, chromedp.Sleep(d)); err != nil {
		t.Fatal(err)
	}
}

func short(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 120 {
		return s[:117] + "..."
	}
	return s
}

// js encodes v as a JavaScript literal.
func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
