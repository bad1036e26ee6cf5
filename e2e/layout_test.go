package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// layoutWidths are the window widths the demo is measured at: its own
// min-width, the two most common laptop widths, and a desktop.
var layoutWidths = []int64{1100, 1280, 1366, 1920}

// minNoteWidth is the narrowest the note text may be: it is what agents
// edit, so a person must be able to read it next to the row's other facts.
const minNoteWidth = 200

type box struct{ L, T, R, B, W, H float64 }

func (a box) overlaps(b box) bool {
	return a.W > 0 && b.W > 0 && a.L < b.R-0.5 && b.L < a.R-0.5 && a.T < b.B-0.5 && b.T < a.B-0.5
}

type rowLayout struct {
	ID       string
	NoteRoom float64 // the note cell's content width left for text beside the pencil
	Text     box
	Pencil   box
	Approve  box
	TwoWords bool // the note has at least two words
	SameLine bool // its first two words are on one line
	Escapes  []string
}

type pageLayout struct {
	ScrollWidth, ClientWidth float64
	Rows                     []rowLayout
	Panels                   []string // panels whose content is wider than the panel
}

// measureLayoutJS measures, in the page, what TestDemoLayout judges: every
// visible order row's cells, the note text and its first two words, and the
// page's and panels' horizontal overflow. Rectangles come from
// getBoundingClientRect, so they are what is painted, not what CSS asks for.
const measureLayoutJS = `(() => {
  const box = (el) => { const b = el.getBoundingClientRect(); return { L: b.left, T: b.top, R: b.right, B: b.bottom, W: b.width, H: b.height }; };
  const rows = [];
  for (const row of document.querySelectorAll('[data-testid^="order-row-"]')) {
    const id = row.dataset.testid.slice("order-row-".length);
    const q = (name) => row.querySelector('[data-testid="' + name + '-' + id + '"]');
    const cell = q("order-note");
    const text = q("order-note-text");
    const pencil = q("order-edit");
    const approve = q("order-approve");
    const cs = getComputedStyle(cell);
    const content = cell.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
    const view = text.parentElement;
    const gap = parseFloat(getComputedStyle(view).columnGap) || 0;
    const out = { ID: id, NoteRoom: content - (pencil ? pencil.getBoundingClientRect().width + gap : 0),
      Text: box(text), Pencil: pencil ? box(pencil) : {}, Approve: approve ? box(approve) : {},
      TwoWords: false, SameLine: false, Escapes: [] };
    // The first two words: on one line, or the note reads one word at a time.
    const node = text.firstChild;
    const words = node && node.nodeType === 3 ? [...node.data.matchAll(/\S+/g)] : [];
    if (words.length >= 2) {
      out.TwoWords = true;
      const top = (m) => { const r = document.createRange(); r.setStart(node, m.index); r.setEnd(node, m.index + m[0].length); return r.getClientRects()[0].top; };
      out.SameLine = Math.abs(top(words[0]) - top(words[1])) < 1;
    }
    // Nothing drawn in a cell may stick out of it.
    for (const td of row.children) {
      const c = td.getBoundingClientRect();
      for (const el of td.querySelectorAll("*")) {
        const r = el.getBoundingClientRect();
        if (r.width === 0 || getComputedStyle(el).position === "absolute") continue;
        if (r.left < c.left - 0.5 || r.right > c.right + 0.5) out.Escapes.push(td.className + " " + (el.dataset.testid || el.className || el.tagName));
      }
    }
    rows.push(out);
  }
  const panels = [];
  for (const p of document.querySelectorAll(".panel")) {
    if (p.scrollWidth > p.clientWidth + 1) panels.push(p.dataset.testid + " " + p.scrollWidth + " > " + p.clientWidth);
  }
  return { ScrollWidth: document.documentElement.scrollWidth, ClientWidth: document.documentElement.clientWidth, Rows: rows, Panels: panels };
})()`

func setWidth(t testing.TB, p *tab, w int64) {
	t.Helper()
	if err := chromedp.Do(p.ctx, chromedp.EmulateViewport(w, 900)); err != nil {
		t.Fatalf("viewport %d: %v", w, err)
	}
	// Layout follows the resize on the next frame.
	evalPage[bool](t, p, `new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`)
}

// TestDemoLayout holds the orders table readable at every width from the
// page's min-width up: the note column keeps room for its text beside the
// pencil, notes read as phrases rather than a word a line, nothing in a row
// sticks out of its cell or covers the Approve button, and from 1280 px up
// the page never scrolls sideways. A long note written by an agent is
// measured too, since that is the note a person most needs to read.
func TestDemoLayout(t *testing.T) {
	p := openDemo(t)
	r := invoke(t, p, "update_note@order", map[string]any{"record": "SO-1002", "note": "Customer asked us to call back before Friday about the second delivery window"})
	if res := r.result(t); res["error"] != nil {
		t.Fatalf("business error: %s", r)
	}
	// The widest status badge ("Awaiting approval") and the Review button.
	if r := invoke(t, p, "approve@order", map[string]any{"record": "SO-1005"}); r.Envelope.OK != true {
		t.Fatalf("approve: %s", r)
	}
	waitPage(t, p, `document.querySelector('[data-testid="order-status-SO-1005"]').dataset.status === "awaiting_approval"`)
	for _, w := range layoutWidths {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			setWidth(t, p, w)
			m := evalPage[pageLayout](t, p, measureLayoutJS)
			if len(m.Rows) != demoPageSize {
				t.Fatalf("%d rows measured, want %d", len(m.Rows), demoPageSize)
			}
			if m.ScrollWidth > m.ClientWidth {
				t.Errorf("the page scrolls sideways: scrollWidth %.0f > clientWidth %.0f", m.ScrollWidth, m.ClientWidth)
			}
			if len(m.Panels) > 0 {
				t.Errorf("panels wider than themselves: %s", strings.Join(m.Panels, "; "))
			}
			for _, row := range m.Rows {
				if row.NoteRoom < minNoteWidth {
					t.Errorf("%s: %.0f px for the note beside the pencil, want at least %d", row.ID, row.NoteRoom, minNoteWidth)
				}
				if row.TwoWords && !row.SameLine {
					t.Errorf("%s: the note's first two words are on different lines (text %.0f px wide)", row.ID, row.Text.W)
				}
				if len(row.Escapes) > 0 {
					t.Errorf("%s: drawn outside its cell: %s", row.ID, strings.Join(row.Escapes, "; "))
				}
				if row.Pencil.overlaps(row.Approve) {
					t.Errorf("%s: the pencil %+v covers the Approve button %+v", row.ID, row.Pencil, row.Approve)
				}
				if row.Pencil.overlaps(row.Text) {
					t.Errorf("%s: the pencil %+v covers the note %+v", row.ID, row.Pencil, row.Text)
				}
			}
			// The long note fills its room: it is the column's width that
			// holds, not a short text that happens to fit.
			for _, row := range m.Rows {
				if row.ID == "SO-1002" && row.Text.W < minNoteWidth {
					t.Errorf("SO-1002's long note is %.0f px wide, want at least %d", row.Text.W, minNoteWidth)
				}
			}
		})
	}
}

type paneLayout struct {
	Console, Request, Response    box
	RequestHidden, ResponseHidden bool
	WhiteSpace                    []string
	Selected                      string
}

const measurePanesJS = `(() => {
  const box = (el) => { const b = el.getBoundingClientRect(); return { L: b.left, T: b.top, R: b.right, B: b.bottom, W: b.width, H: b.height }; };
  const q = (id) => document.querySelector('[data-testid="' + id + '"]');
  const panel = q("console-panel");
  const cs = getComputedStyle(panel);
  const inner = box(panel);
  inner.W = panel.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
  const req = q("console-request"), res = q("console-response");
  return { Console: inner, Request: box(req), Response: box(res), RequestHidden: req.hidden, ResponseHidden: res.hidden,
    WhiteSpace: [getComputedStyle(req).whiteSpace, getComputedStyle(res).whiteSpace],
    Selected: document.querySelector('[data-testid^="console-tab-"][aria-selected="true"]').dataset.pane };
})()`

// TestDemoConsolePanes holds the agent console's raw JSON readable: the
// request and the response each get the console's whole width (they share
// it on tabs), keep their lines instead of wrapping inside strings, and the
// response shows by itself when a reply arrives.
func TestDemoConsolePanes(t *testing.T) {
	p := openDemo(t)
	for _, w := range layoutWidths {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			setWidth(t, p, w)
			clickTestID(t, p, "console-describe")
			waitPage(t, p, `document.querySelector('[data-testid="console-outcome"]').dataset.outcome === "success"`)
			m := evalPage[paneLayout](t, p, measurePanesJS)
			if m.Selected != "response" || !m.RequestHidden || m.ResponseHidden {
				t.Errorf("after a reply: tab %q selected, request hidden %v, response hidden %v; want the response shown", m.Selected, m.RequestHidden, m.ResponseHidden)
			}
			if m.Response.W < 0.95*m.Console.W || m.Response.W < 360 {
				t.Errorf("response pane %.0f px wide in a console of %.0f px: want the whole width, at least 360 px", m.Response.W, m.Console.W)
			}
			for _, ws := range m.WhiteSpace {
				if ws != "pre" {
					t.Errorf("a pane wraps its lines (white-space %q)", ws)
				}
			}
			clickTestID(t, p, "console-tab-request")
			m = evalPage[paneLayout](t, p, measurePanesJS)
			if m.Selected != "request" || m.RequestHidden || !m.ResponseHidden {
				t.Errorf("after choosing Request: tab %q selected, request hidden %v, response hidden %v", m.Selected, m.RequestHidden, m.ResponseHidden)
			}
			if m.Request.W < 0.95*m.Console.W || m.Request.W < 360 {
				t.Errorf("request pane %.0f px wide in a console of %.0f px", m.Request.W, m.Console.W)
			}
			if !evalPage[bool](t, p, `document.querySelector('[data-testid="console-request"]').value.includes('"method": "describe"')`) {
				t.Error("the request pane does not show the describe that was posted")
			}
		})
	}
}

// TestDemoMoreNotices holds the count beside the newest notice readable: it
// says what it counts, and hovering it lists the notices it stands for.
func TestDemoMoreNotices(t *testing.T) {
	p := openDemo(t)
	invoke(t, p, "update_note@order", map[string]any{"record": "SO-1001", "note": "First"})
	invoke(t, p, "update_note@order", map[string]any{"record": "SO-1002", "note": "Second"})
	waitPage(t, p, `document.querySelectorAll('[data-testid="toast"]').length === 2`)
	type more struct{ Text, Title, Newest string }
	m := evalPage[more](t, p, `(() => { const m = document.querySelector('[data-testid="toast-more"]');
	  return { Text: m.textContent, Title: m.title, Newest: document.querySelector('[data-testid="toast"]').firstChild.data }; })()`)
	if m.Text != "+1 more" {
		t.Errorf("count reads %q, want %q", m.Text, "+1 more")
	}
	if !strings.Contains(m.Newest, "SO-1002") || !strings.Contains(m.Title, "1 older notice") || !strings.Contains(m.Title, "SO-1001") {
		t.Errorf("newest notice %q, count's title %q: want the SO-1002 notice shown and the SO-1001 one listed", m.Newest, m.Title)
	}
}
