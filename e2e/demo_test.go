package e2e

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"pling.dev/agent/internal/devserver"
	"pling.dev/agent/surface"
)

// The demo's seed data: 48 orders, SO-1001 to SO-1048, eight to a page;
// SO-1002 has no note, SO-1003 is locked, SO-1001 is open.
const (
	demoOrders   = 48
	demoPageSize = 8
)

// openDemo opens the demo page, waits until its surface listens, and starts
// the agent in an isolated world.
func openDemo(t *testing.T) *tab {
	t.Helper()
	p := openTab(t, siteURL+"/")
	waitPage(t, p, `typeof window.__demo === "object"`)
	// ready rejects when the runtime cannot load: that fails here.
	evalPage[bool](t, p, `window.__demo.ready.then(() => true)`)
	p.startAgent(t)
	return p
}

func executorCalls(t testing.TB, p *tab) int {
	t.Helper()
	return evalPage[int](t, p, `window.__demo.executorCalls`)
}

// noteShown is the note text the page's table shows for an order on the
// current page.
func noteShown(t testing.TB, p *tab, id string) string {
	t.Helper()
	return evalPage[string](t, p, fmt.Sprintf(`document.querySelector('[data-testid="order-note-text-%s"]').textContent`, id))
}

func auditCount(t testing.TB, p *tab) int {
	t.Helper()
	return evalPage[int](t, p, `window.__demo.auditEvents().length`)
}

func TestDemoReady(t *testing.T) {
	p := openDemo(t)
	if st := evalPage[string](t, p, `document.querySelector('[data-testid="runtime-status"]').dataset.state`); st != "listening" {
		t.Errorf("runtime status %q, want listening", st)
	}
	env := describeEnv(t, nil)
	r := send(t, p, env)
	if r.Channel != "pling.surface" || r.Kind != "response" || r.App != "orders" {
		t.Errorf("reply wrapper = %s, want channel pling.surface, kind response, app orders", r)
	}
	if !r.Envelope.OK || r.Envelope.ID != env["id"] || r.Envelope.Protocol != surface.Protocol {
		t.Errorf("reply envelope = %s", r)
	}
	d := r.description(t)
	if d.Protocol != surface.Protocol || d.App != "orders" {
		t.Errorf("description protocol %q app %q", d.Protocol, d.App)
	}
	// The reply went back to this window, from this window's origin.
	type seen struct {
		Origin     string `json:"origin"`
		FromWindow bool   `json:"fromWindow"`
	}
	got := evalAgent[[]seen](t, p, `agent.responsesSince(0)`)
	if len(got) != 1 || got[0].Origin != siteURL || !got[0].FromWindow {
		t.Errorf("replies seen: %+v, want one from %s", got, siteURL)
	}
}

func TestDemoDescribe(t *testing.T) {
	p := openDemo(t)
	ids := func(rs []surface.RecordView) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return out
	}
	orderIDs := func(from, n int) []string {
		var out []string
		for i := from; i < from+n; i++ {
			out = append(out, fmt.Sprintf("SO-%d", 1000+i))
		}
		return out
	}

	t.Run("default window", func(t *testing.T) {
		d := describe(t, p, nil)
		c := d.Context
		if got, want := ids(c.Records), orderIDs(1, surface.DefaultRecordLimit); !slices.Equal(got, want) {
			t.Errorf("records %v, want %v", got, want)
		}
		if c.RecordsTotal != demoOrders || c.RecordIDsTotal != demoOrders || len(c.RecordIDs) != demoOrders {
			t.Errorf("recordsTotal %d recordIdsTotal %d len(recordIds) %d, want %d each", c.RecordsTotal, c.RecordIDsTotal, len(c.RecordIDs), demoOrders)
		}
		if len(c.Regions) == 0 || c.Route == "" || c.State["filter"] != "all" {
			t.Errorf("context lacks regions, route or state: regions %v route %q state %v", c.Regions, c.Route, c.State)
		}
		r := c.Records[1]
		if r.Kind != "order" || r.Fields["note"] != "" || r.Fields["customer"] != "Brightwater Dental Group" || r.Offscreen {
			t.Errorf("SO-1002 = %+v", r)
		}
	})

	t.Run("offset and limit", func(t *testing.T) {
		d := describe(t, p, map[string]any{"offset": 10, "limit": 5})
		if got, want := ids(d.Context.Records), orderIDs(11, 5); !slices.Equal(got, want) {
			t.Errorf("records %v, want %v", got, want)
		}
		for _, r := range d.Context.Records {
			if !r.Offscreen {
				t.Errorf("%s is not on the page's first page but is not marked offscreen", r.ID)
			}
		}
		if d.Context.RecordsTotal != demoOrders {
			t.Errorf("recordsTotal %d", d.Context.RecordsTotal)
		}
		d = describe(t, p, map[string]any{"offset": 40, "limit": 100})
		if got, want := ids(d.Context.Records), orderIDs(41, 8); !slices.Equal(got, want) {
			t.Errorf("last window: records %v, want %v", got, want)
		}
	})

	t.Run("record by id", func(t *testing.T) {
		d := describe(t, p, map[string]any{"record": "SO-1003"})
		if got := ids(d.Context.Records); !slices.Equal(got, []string{"SO-1003"}) {
			t.Fatalf("records %v, want [SO-1003]", got)
		}
		if f := d.Context.Records[0].Fields; f["locked"] != true || f["note"] != "Credit check pending with finance" {
			t.Errorf("SO-1003 fields %v", f)
		}
	})

	t.Run("records by array", func(t *testing.T) {
		d := describe(t, p, map[string]any{"record": []string{"SO-1040", "SO-1002"}})
		got := ids(d.Context.Records)
		slices.Sort(got)
		if !slices.Equal(got, []string{"SO-1002", "SO-1040"}) {
			t.Fatalf("records %v, want SO-1002 and SO-1040", got)
		}
		for _, r := range d.Context.Records {
			if r.ID == "SO-1040" && !r.Offscreen {
				t.Errorf("SO-1040 is on page 5 but not marked offscreen")
			}
		}
	})

	t.Run("capabilities with folded templates", func(t *testing.T) {
		d := describe(t, p, nil)
		byID := map[string]surface.Capability{}
		for _, c := range d.Capabilities {
			byID[c.ID] = c
			if strings.Contains(c.ID, ":") {
				t.Errorf("capability %q is a per-record action; templates must stay folded", c.ID)
			}
		}
		for _, id := range []string{"orders.search", "orders.set_filter", "orders.go_to_page", "update_note@order", "approve@order"} {
			if _, ok := byID[id]; !ok {
				t.Errorf("capability %s missing from %v", id, d.Capabilities)
			}
		}
		want := &surface.CapabilityRecord{Param: "record", Total: demoOrders, Offscreen: demoOrders - demoPageSize}
		for _, id := range []string{"update_note@order", "approve@order"} {
			if got := byID[id].Record; !reflect.DeepEqual(got, want) {
				t.Errorf("%s record = %+v, want %+v", id, got, want)
			}
		}
		note := byID["update_note@order"]
		if note.Effect != "write" || len(note.InputSchema) == 0 {
			t.Errorf("update_note@order = %+v", note)
		}
		if a := byID["approve@order"]; a.Approval != "always" || a.Handoff == "" {
			t.Errorf("approve@order = %+v", a)
		}
		if s := byID["orders.search"]; s.Effect != "read" || s.Record != nil {
			t.Errorf("orders.search = %+v", s)
		}
	})

	t.Run("capabilities changed", func(t *testing.T) {
		describe(t, p, map[string]any{"capabilities": "full"})
		d := describe(t, p, map[string]any{"capabilities": "changed"})
		if !d.CapabilitiesUnchanged || len(d.Capabilities) != 0 {
			t.Errorf("second describe with capabilities changed: unchanged %v, %d capabilities", d.CapabilitiesUnchanged, len(d.Capabilities))
		}
	})
}

func TestDemoInvoke(t *testing.T) {
	p := openDemo(t)

	t.Run("folded invoke changes the page", func(t *testing.T) {
		const note = "Call back before Friday"
		if got := noteShown(t, p, "SO-1002"); got == note {
			t.Fatalf("SO-1002 already shows %q", got)
		}
		calls := executorCalls(t, p)
		r := invoke(t, p, "update_note@order", map[string]any{"record": "SO-1002", "note": note})
		res := r.result(t)
		if res["error"] != nil {
			t.Fatalf("business error: %s", r)
		}
		after := r.Envelope.After
		if after == nil || len(after.Records) != 1 || after.Records[0].ID != "SO-1002" || after.Records[0].Fields["note"] != note {
			t.Errorf("after = %+v, want SO-1002 with note %q", after, note)
		}
		if got := executorCalls(t, p); got != calls+1 {
			t.Errorf("executor calls %d -> %d, want one more", calls, got)
		}
		waitPage(t, p, fmt.Sprintf(`document.querySelector('[data-testid="order-note-text-SO-1002"]').textContent === %s`, js(note)))
		if got := evalPage[string](t, p, `window.__demo.order("SO-1002").note`); got != note {
			t.Errorf("the page's order SO-1002 has note %q", got)
		}
		type ev struct {
			RequestID, Method, Capability, RecordID, Outcome, AgentID, SessionID string
		}
		events := evalPage[[]ev](t, p, `window.__demo.auditEvents()`)
		if len(events) == 0 {
			t.Fatal("no audit event")
		}
		checkAuditRow(t, p, r.Envelope.ID, "ok", "ok")
		last := events[len(events)-1]
		if last.RequestID != r.Envelope.ID || last.Method != "invoke" || last.Capability != "update_note@order" || last.RecordID != "SO-1002" || last.Outcome != "ok" || last.AgentID == "" || last.SessionID == "" {
			t.Errorf("audit event %+v", last)
		}
	})

	t.Run("business error leaves the page alone", func(t *testing.T) {
		before := noteShown(t, p, "SO-1003")
		calls := executorCalls(t, p)
		r := invoke(t, p, "update_note@order", map[string]any{"record": "SO-1003", "note": "Ship it anyway"})
		res := r.result(t)
		be, _ := res["error"].(map[string]any)
		if be == nil || be["code"] != "ORDER_LOCKED" || be["message"] == "" {
			t.Errorf("result = %v, want error ORDER_LOCKED", res)
		}
		if a := r.Envelope.After; a != nil && len(a.Records) > 0 {
			t.Errorf("after reports record changes on a refused call: %+v", a.Records)
		}
		if got := executorCalls(t, p); got != calls+1 {
			t.Errorf("executor calls %d -> %d, want one more (the executor decides)", calls, got)
		}
		if got := noteShown(t, p, "SO-1003"); got != before {
			t.Errorf("SO-1003 note shown %q -> %q", before, got)
		}
		checkAuditRow(t, p, r.Envelope.ID, "business-error", "business error")
	})

	t.Run("approval stays pending", func(t *testing.T) {
		if open := evalPage[bool](t, p, `document.querySelector('[data-testid="approval-dialog"]').open`); open {
			t.Fatal("the approval dialog is open before any request")
		}
		r := invoke(t, p, "approve@order", map[string]any{"record": "SO-1001"})
		res := r.result(t)
		if got, want := res["approval"], map[string]any{"status": "pending"}; !reflect.DeepEqual(got, want) {
			t.Errorf("approval = %v, want exactly %v", got, want)
		}
		raw, _ := json.Marshal(r)
		for _, word := range []string{"granted", "approved", "approvedBy", "confirmedBy", "signature", "token"} {
			if strings.Contains(string(raw), `"`+word) {
				t.Errorf("the reply carries approval evidence %q: %s", word, raw)
			}
		}
		// Completed, not done: the audit row says so rather than "ok".
		checkAuditRow(t, p, r.Envelope.ID, "pending-approval", "approval pending")
		waitPage(t, p, `document.querySelector('[data-testid="approval-dialog"]').open && document.querySelector('[data-testid="approval-order"]').textContent === "SO-1001"`)
		if st := evalPage[string](t, p, `window.__demo.order("SO-1001").status`); st != "awaiting_approval" {
			t.Errorf("SO-1001 status %q, want awaiting_approval (only a person approves)", st)
		}
		if got := evalPage[[]string](t, p, `window.__demo.pendingApprovals()`); !slices.Equal(got, []string{"SO-1001"}) {
			t.Errorf("pending approvals %v", got)
		}

		// The agent shares the DOM, so it can try the dialog's button
		// itself: a scripted click is not a person and must not approve.
		evalAgent[bool](t, p, `(document.querySelector('[data-testid="approval-confirm"]').click(), true)`)
		p.sleep(t, settle)
		if st := evalPage[string](t, p, `window.__demo.order("SO-1001").status`); st != "awaiting_approval" {
			t.Fatalf("a scripted click on Confirm made SO-1001 %q", st)
		}
		// A person's click (trusted input) does approve, so the check above
		// could have failed.
		clickTestID(t, p, "approval-confirm")
		waitPage(t, p, `window.__demo.order("SO-1001").status === "approved"`)
	})
}

// clickTestID clicks the element with the data-testid, as a person would.
func clickTestID(t testing.TB, p *tab, id string) {
	t.Helper()
	if err := chromedp.Do(p.ctx, chromedp.Click(chromedp.CSS(fmt.Sprintf(`[data-testid="%s"]`, id)))); err != nil {
		t.Fatalf("click %s: %v", id, err)
	}
}

// TestDemoConsolePending drives the agent console as a person does: an
// approval request it sends reads as pending in the console and in the
// audit row, never as a success, because both read the kernel's
// result.approval.status.
func TestDemoConsolePending(t *testing.T) {
	p := openDemo(t)
	clickTestID(t, p, "console-describe")
	waitPage(t, p, `document.querySelector('[data-testid="console-outcome"]').dataset.outcome === "success"`)
	evalPage[bool](t, p, `(() => {
		const pick = (id, value) => {
			const e = document.querySelector('[data-testid="' + id + '"]');
			e.value = value;
			e.dispatchEvent(new Event("change", { bubbles: true }));
		};
		pick("console-capability", "approve@order");
		pick("console-record", "SO-1005");
		return true;
	})()`)
	clickTestID(t, p, "console-invoke")
	waitPage(t, p, `!["success", "waiting"].includes(document.querySelector('[data-testid="console-outcome"]').dataset.outcome)`)
	type box struct{ Outcome, Text, Response string }
	got := evalPage[box](t, p, `(() => { const b = document.querySelector('[data-testid="console-outcome"]');
		return { Outcome: b.dataset.outcome, Text: b.textContent, Response: document.querySelector('[data-testid="console-response"]').value }; })()`)
	if got.Outcome != "pending-approval" || !strings.HasPrefix(got.Text, "Approval pending") {
		t.Fatalf("console shows %q (%s), want Approval pending", got.Text, got.Outcome)
	}
	var reply struct {
		Envelope struct {
			ID string `json:"id"`
		} `json:"envelope"`
	}
	if err := json.Unmarshal([]byte(got.Response), &reply); err != nil || reply.Envelope.ID == "" {
		t.Fatalf("response pane %q: %v", got.Response, err)
	}
	checkAuditRow(t, p, reply.Envelope.ID, "pending-approval", "approval pending")
}

// TestDemoUnderTheScriptPolicy: the demo is served with the
// Content-Security-Policy js/README.md recommends, the browser enforces it
// (a string assigned to innerHTML is refused), and the demo works under it
// with no violation: it loads and compiles the kernel, draws the table with
// its locked orders, describes and runs an invoke that changes the page.
func TestDemoUnderTheScriptPolicy(t *testing.T) {
	p := openTabFirst(t, siteURL+"/", `window.__violations = [];
		document.addEventListener("securitypolicyviolation", (e) => window.__violations.push(e.violatedDirective + " " + e.blockedURI));`)
	waitPage(t, p, `typeof window.__demo === "object"`)
	evalPage[bool](t, p, `window.__demo.ready.then(() => true)`)
	p.startAgent(t)
	if got := evalPage[string](t, p, `fetch(location.href, { cache: "no-store" }).then((r) => r.headers.get("content-security-policy"))`); got != devserver.ScriptPolicy {
		t.Fatalf("the demo's Content-Security-Policy %q, want %q", got, devserver.ScriptPolicy)
	}
	if st := evalPage[string](t, p, `document.querySelector('[data-testid="runtime-status"]').dataset.state`); st != "listening" {
		t.Errorf("runtime status %q, want listening", st)
	}
	if n := evalPage[int](t, p, `document.querySelectorAll('[data-testid="order-locked"] svg path').length`); n == 0 {
		t.Error("no locked order shows its padlock")
	}
	if d := send(t, p, describeEnv(t, nil)).description(t); len(d.Capabilities) == 0 {
		t.Error("describe: no capabilities")
	}
	const note = "Written under the script policy"
	if res := invoke(t, p, "update_note@order", map[string]any{"record": "SO-1002", "note": note}).result(t); res["error"] != nil {
		t.Fatalf("invoke: business error %v", res)
	}
	waitPage(t, p, fmt.Sprintf(`document.querySelector('[data-testid="order-note-text-SO-1002"]').textContent === %s`, js(note)))
	if v := evalPage[[]string](t, p, `window.__violations`); len(v) != 0 {
		t.Errorf("violations of the policy while the demo ran: %v", v)
	}
	// The policy is live: a string is no longer script-capable markup.
	if got := evalPage[string](t, p, `(() => { try { document.createElement("div").innerHTML = "<b>x</b>"; return "accepted"; } catch (e) { return e.name; } })()`); got != "TypeError" {
		t.Errorf("innerHTML with a string: %s, want TypeError (trusted types enforced)", got)
	}
	// Chromium logs the refusal the probe asked for; it is no problem of the page.
	p.mu.Lock()
	defer p.mu.Unlock()
	p.problems = slices.DeleteFunc(p.problems, func(msg string) bool {
		return strings.HasPrefix(msg, "log (security): This document requires 'TrustedHTML' assignment")
	})
}
