package e2e

import (
	"testing"
)

// seenMessage is how the control page saw one message event.
type seenMessage struct {
	IsTrusted  bool           `json:"isTrusted"`
	Origin     string         `json:"origin"`
	FromWindow bool           `json:"fromWindow"`
	Data       map[string]any `json:"data"`
}

// frameMark is a test frame's "sent" or "report" message, as the agent saw it.
type frameMark struct {
	Tag         string           `json:"tag"`
	Origin      string           `json:"origin"`      // MessageEvent.origin
	FrameOrigin string           `json:"frameOrigin"` // self.origin inside the frame
	Count       int              `json:"count"`
	Received    []map[string]any `json:"received"`
}

// TestHarnessControl checks the premises of every other test on a page with
// no surface and a listener that answers anyone: the agent's messages arrive
// as a content script's do (trusted, from this window, with the page's
// origin), the page's own synthetic events are untrusted, each foreign frame
// really loads and posts with its own origin, and a reply to a frame would
// be seen. If any of this broke, the hostile tests could pass for the wrong
// reason.
func TestHarnessControl(t *testing.T) {
	p := openHarness(t)
	p.startAgent(t)

	id := evalAgent[string](t, p, `agent.id()`)
	rep := evalAgent[map[string]any](t, p, `agent.request({protocol: "pling.surface/0.1", id: `+js(id)+`, method: "describe"})`)
	if env, _ := rep["envelope"].(map[string]any); env["id"] != id {
		t.Fatalf("echo = %v, want envelope id %q", rep, id)
	}
	evalPage[bool](t, p, `(window.dispatchEvent(new MessageEvent("message", {data: {e2e: "synthetic"}, origin: location.origin, source: window})), true)`)

	seen := evalPage[[]seenMessage](t, p, `__e2e.seen()`)
	var agentMsg, synthetic *seenMessage
	for i := range seen {
		switch {
		case seen[i].Data["kind"] == "request":
			agentMsg = &seen[i]
		case seen[i].Data["e2e"] == "synthetic":
			synthetic = &seen[i]
		}
	}
	if agentMsg == nil || !agentMsg.IsTrusted || !agentMsg.FromWindow || agentMsg.Origin != siteURL {
		t.Errorf("the agent's request arrived as %+v, want trusted, from this window, origin %s", agentMsg, siteURL)
	}
	if synthetic == nil || synthetic.IsTrusted {
		t.Errorf("the page's dispatched event arrived as %+v, want untrusted", synthetic)
	}

	frames := []struct {
		name, src, origin string
		sandbox           bool
	}{
		{"same-site other port", foreignURLs["same-site other port"] + "/hostile.html", foreignURLs["same-site other port"], false},
		{"cross-site", foreignURLs["cross-site"] + "/hostile.html", foreignURLs["cross-site"], false},
		{"sandboxed", siteURL + "/e2e/foreign/hostile.html", "null", true},
	}
	for i, f := range frames {
		t.Run(f.name, func(t *testing.T) {
			tag := "control-" + string(rune('a'+i))
			req := map[string]any{"channel": "pling.surface", "kind": "request", "envelope": map[string]any{"protocol": "pling.surface/0.1", "id": tag, "method": "describe"}}
			sent := evalAgent[frameMark](t, p, `agent.addFrame(`+js(f.src)+`, `+js(map[string]any{"tag": tag, "messages": []any{req}, "sandbox": f.sandbox})+`)`)
			if sent.Origin != f.origin || sent.FrameOrigin != f.origin || sent.Count != 1 {
				t.Errorf("frame posted %+v, want origin %s", sent, f.origin)
			}
			var got *seenMessage
			for _, s := range evalPage[[]seenMessage](t, p, `__e2e.seen()`) {
				if env, _ := s.Data["envelope"].(map[string]any); env["id"] == tag {
					got = &s
				}
			}
			if got == nil || !got.IsTrusted || got.FromWindow || got.Origin != f.origin {
				t.Errorf("the page saw the frame's request as %+v, want trusted, origin %s, not from this window", got, f.origin)
			}
			report := evalAgent[frameMark](t, p, `agent.frameReport(`+js(tag)+`)`)
			if len(report.Received) != 1 {
				t.Errorf("the frame received %v, want the one reply the control page sends", report.Received)
			}
		})
	}
}
