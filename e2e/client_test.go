package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"pling.dev/agent/surface"
)

// reply is a response message as the agent receives it.
type reply struct {
	Channel  string   `json:"channel"`
	Kind     string   `json:"kind"`
	App      string   `json:"app"`
	Envelope envelope `json:"envelope"`
}

type envelope struct {
	Protocol string               `json:"protocol"`
	ID       string               `json:"id"`
	OK       bool                 `json:"ok"`
	Result   json.RawMessage      `json:"result"`
	Error    *surface.Error       `json:"error"`
	After    *surface.Observation `json:"after"`
}

// code is the protocol error code of the reply, or "" when it is ok.
func (r reply) code() string {
	if r.Envelope.Error == nil {
		return ""
	}
	return string(r.Envelope.Error.Code)
}

func (r reply) String() string {
	b, _ := json.Marshal(r)
	return brief(string(b))
}

// brief cuts s for a failure message: a whole description is too long to read.
func brief(s string) string {
	const most = 600
	if len(s) <= most {
		return s
	}
	return fmt.Sprintf("%s… (%d bytes)", s[:most], len(s))
}

// description decodes the result of a describe.
func (r reply) description(t testing.TB) surface.Description {
	t.Helper()
	if !r.Envelope.OK {
		t.Fatalf("describe failed: %s", r)
	}
	var d surface.Description
	if err := json.Unmarshal(r.Envelope.Result, &d); err != nil {
		t.Fatalf("describe result: %v in %s", err, r)
	}
	return d
}

// result decodes the result of an invoke into a generic object.
func (r reply) result(t testing.TB) map[string]any {
	t.Helper()
	if !r.Envelope.OK {
		t.Fatalf("invoke failed: %s", r)
	}
	var m map[string]any
	if err := json.Unmarshal(r.Envelope.Result, &m); err != nil {
		t.Fatalf("invoke result: %v in %s", err, r)
	}
	return m
}

var idSeq atomic.Int64

// newID returns a request id unique within the test binary.
func newID(t testing.TB) string {
	name := strings.NewReplacer("/", ".", " ", "_").Replace(t.Name())
	return fmt.Sprintf("%s.%d", name, idSeq.Add(1))
}

func describeEnv(t testing.TB, input any) map[string]any {
	env := map[string]any{"protocol": surface.Protocol, "id": newID(t), "method": "describe"}
	if input != nil {
		env["input"] = input
	}
	return env
}

func invokeEnv(t testing.TB, capability string, input any) map[string]any {
	env := map[string]any{"protocol": surface.Protocol, "id": newID(t), "method": "invoke", "capability": capability}
	if input != nil {
		env["input"] = input
	}
	return env
}

// send posts env from the agent and waits for the reply to its id.
func send(t testing.TB, p *tab, env map[string]any) reply {
	t.Helper()
	return sendWith(t, p, env, nil)
}

// sendWith is send with extra wrapper members.
func sendWith(t testing.TB, p *tab, env map[string]any, wrapper map[string]any) reply {
	t.Helper()
	opts := map[string]any{}
	if wrapper != nil {
		opts["wrapper"] = wrapper
	}
	return evalAgent[reply](t, p, `agent.request(`+js(env)+`, `+js(opts)+`)`)
}

func describe(t testing.TB, p *tab, input any) surface.Description {
	t.Helper()
	return send(t, p, describeEnv(t, input)).description(t)
}

func invoke(t testing.TB, p *tab, capability string, input any) reply {
	t.Helper()
	return send(t, p, invokeEnv(t, capability, input))
}

// wantCode fails unless r is a protocol failure with code, answering id.
func wantCode(t testing.TB, r reply, id string, code surface.Code) {
	t.Helper()
	if r.Envelope.OK || r.code() != string(code) {
		t.Fatalf("reply = %s, want ok:false with %s", r, code)
	}
	if r.Envelope.ID != id || r.Envelope.Protocol != surface.Protocol {
		t.Errorf("reply answers id %q protocol %q, want %q %q", r.Envelope.ID, r.Envelope.Protocol, id, surface.Protocol)
	}
	if r.Envelope.Result != nil {
		t.Errorf("a protocol failure carries a result: %s", r)
	}
}

// settle is how long a message that must go unanswered is given to be
// answered anyway. It bounds a wait for something that must not happen; it
// is not a speed requirement.
const settle = 400 * time.Millisecond

// expectNoReplies checks that nothing answered the messages posted since the
// agent had seen n responses: it sends one sentinel describe, which must be
// the only new response after a settling pause.
func expectNoReplies(t testing.TB, p *tab, n int) {
	t.Helper()
	sentinel := describeEnv(t, map[string]any{"limit": 0})
	if r := send(t, p, sentinel); !r.Envelope.OK {
		t.Fatalf("sentinel describe failed: %s", r)
	}
	p.sleep(t, settle)
	type seen struct {
		Data       reply  `json:"data"`
		Origin     string `json:"origin"`
		FromWindow bool   `json:"fromWindow"`
	}
	got := evalAgent[[]seen](t, p, fmt.Sprintf(`agent.responsesSince(%d)`, n))
	for _, s := range got {
		if s.Data.Envelope.ID != sentinel["id"] {
			t.Errorf("unexpected reply: %s", s.Data)
		}
	}
	if len(got) != 1 {
		t.Errorf("got %d responses since the hostile messages, want only the sentinel's", len(got))
	}
}

func responseCount(t testing.TB, p *tab) int {
	t.Helper()
	return evalAgent[int](t, p, `agent.responseCount()`)
}
