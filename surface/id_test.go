package surface_test

import (
	"context"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"pling.dev/agent/surface"
	"pling.dev/agent/surface/surfacetest"
)

// TestEnvelopeIDEcho holds the id rules of a protocol failure: the id is
// echoed whenever it can be read and passes the rules (a non-empty string of
// at most MaxIDBytes bytes that is the only key of the request reading "id"
// in any case), and "" otherwise, whatever else is wrong with the request.
func TestEnvelopeIDEcho(t *testing.T) {
	long := strings.Repeat("i", surface.MaxIDBytes)
	tests := []struct {
		name, req, code, id string
	}{
		{"case variant method", `{"protocol":"pling.surface/0.1","id":"a","method":"describe","Method":"invoke"}`, "INVALID_REQUEST", "a"},
		{"case variant protocol", `{"protocol":"pling.surface/0.1","PROTOCOL":"x","id":"a","method":"describe"}`, "INVALID_REQUEST", "a"},
		{"case variant after the id", `{"id":"a","protocol":"pling.surface/0.1","method":"describe","METHOD":"x"}`, "INVALID_REQUEST", "a"},
		{"duplicate method", `{"protocol":"pling.surface/0.1","id":"a","method":"describe","method":"invoke"}`, "INVALID_REQUEST", "a"},
		{"case variant deep in input", pInvoke("a", "p.echo", `{"x":{"y":[{"a":1,"A":2}]}}`), "INVALID_REQUEST", "a"},
		{"unicode case variant in input", pInvoke("a", "p.echo", `{"k":1,"\u212a":2}`), "INVALID_REQUEST", "a"},
		{"string over the bound in input", pInvoke("a", "p.echo", `{"s":"`+strings.Repeat("x", surface.DefaultLimits.MaxStringBytes+1)+`"}`), "INVALID_REQUEST", "a"},
		{"nesting over the bound in input", pInvoke("a", "p.echo", `{"x":`+strings.Repeat("[", 40)+strings.Repeat("]", 40)+`}`), "INVALID_REQUEST", "a"},
		{"id at the byte limit", `{"protocol":"pling.surface/0.1","id":"` + long + `","method":"attach"}`, "METHOD_NOT_SUPPORTED", long},
		{"id one byte over the limit", `{"protocol":"pling.surface/0.1","id":"` + long + `x","method":"describe"}`, "INVALID_REQUEST", ""},
		{"id over the limit in multibyte runes", `{"protocol":"pling.surface/0.1","id":"` + strings.Repeat("é", surface.MaxIDBytes/2+1) + `","method":"describe"}`, "INVALID_REQUEST", ""},
		{"id over the limit with a case variant", `{"protocol":"pling.surface/0.1","id":"` + long + `x","method":"describe","Method":"x"}`, "INVALID_REQUEST", ""},
		{"duplicate id", `{"protocol":"pling.surface/0.1","id":"a","id":"a","method":"describe"}`, "INVALID_REQUEST", ""},
		{"case variant id", `{"protocol":"pling.surface/0.1","id":"a","ID":"b","method":"describe"}`, "INVALID_REQUEST", ""},
		{"case variant id first", `{"Id":"b","protocol":"pling.surface/0.1","id":"a","method":"describe"}`, "INVALID_REQUEST", ""},
		{"case variant id of another type", `{"protocol":"pling.surface/0.1","id":"a","iD":1,"method":"describe"}`, "INVALID_REQUEST", ""},
		{"nested id does not count", `{"protocol":"pling.surface/0.1","method":"describe","input":{"id":"a","ID":"b"}}`, "INVALID_REQUEST", ""},
		{"not JSON after a case variant", `{"protocol":"pling.surface/0.1","id":"a","method":"describe","Method":x}`, "INVALID_REQUEST", ""},
		{"trailing data", `{"protocol":"pling.surface/0.1","id":"a","method":"describe","Method":1} {}`, "INVALID_REQUEST", ""},
		{"lone surrogate id", `{"protocol":"pling.surface/0.1","id":"\ud800","method":"describe","Method":1}`, "INVALID_REQUEST", ""},
		{"empty id with a case variant", `{"protocol":"pling.surface/0.1","id":"","method":"describe","Method":1}`, "INVALID_REQUEST", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			page := pEchoPage(3)
			var events []surface.AuditEvent
			s := pNewSurface(t, page, func(o *surface.Options) {
				o.OnAudit = func(_ context.Context, ev surface.AuditEvent) error { events = append(events, ev); return nil }
			})
			m := pDo(t, s, tc.req)
			if got := pCode(m); got != tc.code {
				t.Errorf("code = %q, want %q (%v)", got, tc.code, m["error"])
			}
			if m["id"] != tc.id {
				t.Errorf("id = %.40q, want %.40q", m["id"], tc.id)
			}
			if len(events) != 1 || events[0].RequestID != tc.id {
				t.Errorf("audit = %+v, want one event with the id of the reply", events)
			}
			if n := len(page.Calls()); n != 0 {
				t.Errorf("executor calls = %d, want 0", n)
			}
		})
	}
}

// TestHandleValueIDEcho: the same rules for a request that arrives decoded.
func TestHandleValueIDEcho(t *testing.T) {
	tests := []struct {
		name string
		v    map[string]any
		id   string
	}{
		{"case variant method", map[string]any{"protocol": surface.Protocol, "id": "v", "method": "describe", "Method": "x"}, "v"},
		{"case variant id", map[string]any{"protocol": surface.Protocol, "id": "v", "ID": "w", "method": "describe"}, ""},
		{"id over the limit", map[string]any{"protocol": surface.Protocol, "id": strings.Repeat("v", surface.MaxIDBytes+1), "method": "describe", "Method": "x"}, ""},
		{"id not UTF-8", map[string]any{"protocol": surface.Protocol, "id": "v\xff", "method": "describe", "Method": "x"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := pNewSurface(t, pEchoPage(1), nil)
			r := s.HandleValue(context.Background(), tc.v)
			if r.OK || r.Error.Code != surface.CodeInvalidRequest || r.ID != tc.id {
				t.Errorf("response = %+v, want INVALID_REQUEST with id %q", r, tc.id)
			}
		})
	}
}

// TestReplyCap holds the reply bound against requests built to break it:
// whatever the request and however the request bounds are raised, an
// encoded reply is at most Limits.MaxResponseBytes.
func TestReplyCap(t *testing.T) {
	huge := strings.Repeat("i", 8<<20)
	ctrl := strings.Repeat(`\u0001`, surface.MaxIDBytes) // each byte escapes to six in the reply
	tests := []struct {
		name   string
		limits surface.Limits
		req    string
		code   string
	}{
		{"8 MiB id, default bounds", surface.Limits{}, `{"protocol":"pling.surface/0.1","id":"` + huge + `","method":"describe"}`, "INVALID_REQUEST"},
		{"8 MiB id, raised request bounds", surface.Limits{MaxRequestBytes: 16 << 20, MaxStringBytes: 16 << 20},
			`{"protocol":"pling.surface/0.1","id":"` + huge + `","method":"describe"}`, "INVALID_REQUEST"},
		{"8 MiB id with a case variant key", surface.Limits{MaxRequestBytes: 16 << 20, MaxStringBytes: 16 << 20},
			`{"protocol":"pling.surface/0.1","id":"` + huge + `","method":"describe","Method":1}`, "INVALID_REQUEST"},
		{"8 MiB unknown field", surface.Limits{MaxRequestBytes: 16 << 20, MaxStringBytes: 16 << 20},
			`{"protocol":"pling.surface/0.1","id":"a","method":"describe","` + huge + `":1}`, "INVALID_REQUEST"},
		{"8 MiB describe input field", surface.Limits{MaxRequestBytes: 16 << 20, MaxStringBytes: 16 << 20},
			`{"protocol":"pling.surface/0.1","id":"a","method":"describe","input":{"` + huge + `":1}}`, "INVALID_REQUEST"},
		{"8 MiB key path to a too deep value", surface.Limits{MaxRequestBytes: 16 << 20, MaxStringBytes: 16 << 20},
			pInvoke("a", "p.echo", `{"`+huge+`":`+strings.Repeat("[", 40)+strings.Repeat("]", 40)+`}`), "INVALID_REQUEST"},
		{"8 MiB capability", surface.Limits{MaxRequestBytes: 16 << 20, MaxStringBytes: 16 << 20}, pInvoke("a", huge, `{}`), "CAPABILITY_NOT_EXPOSED"},
		{"escaped id at the smallest cap", surface.Limits{MaxResponseBytes: surface.MinResponseBytes},
			`{"protocol":"pling.surface/0.1","id":"` + ctrl + `","method":"describe"}`, ""},
		{"escaped id, failure at the smallest cap", surface.Limits{MaxResponseBytes: surface.MinResponseBytes},
			`{"protocol":"pling.surface/0.1","id":"` + ctrl + `","method":"attach"}`, "METHOD_NOT_SUPPORTED"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := pNewSurface(t, pEchoPage(20), func(o *surface.Options) { o.Limits = tc.limits })
			limit := tc.limits.MaxResponseBytes
			if limit == 0 {
				limit = surface.DefaultLimits.MaxResponseBytes
			}
			out := s.HandleJSON(context.Background(), []byte(tc.req))
			if len(out) > limit {
				t.Fatalf("reply is %d bytes, cap %d: %.200s", len(out), limit, out)
			}
			m, ok := pDecode(t, out).(map[string]any)
			if !ok {
				t.Fatalf("reply is not an object: %.200s", out)
			}
			if err := pShapeError(m); err != nil {
				t.Fatal(err)
			}
			if got := pCode(m); got != tc.code {
				t.Errorf("code = %q, want %q: %.200s", got, tc.code, out)
			}
			if id, _ := m["id"].(string); len(id) > surface.MaxIDBytes {
				t.Errorf("reply echoes a %d-byte id", len(id))
			}
		})
	}
}

// TestResponseCapFloor: a reply cap too small to hold a protocol failure
// with the longest id is a configuration error, not a reply over the cap.
func TestResponseCapFloor(t *testing.T) {
	for _, n := range []int{1, 100, surface.MinResponseBytes - 1} {
		page := pEchoPage(1)
		_, err := surface.New(surface.Options{Registry: page.View, Execute: page.Execute, Now: surfacetest.NewClock().Now,
			Limits: surface.Limits{MaxResponseBytes: n}})
		if err == nil {
			t.Errorf("MaxResponseBytes %d accepted", n)
		}
	}
}

// TestPageRuntimeKeepsTheKernelsIDRule: the page runtime refuses some
// requests before the kernel and echoes their id under the kernel's rule,
// so its copy of the id bound must be MaxIDBytes.
func TestPageRuntimeKeepsTheKernelsIDRule(t *testing.T) {
	src, err := os.ReadFile("../js/constants.js")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^export const MAX_ID_BYTES = (\d+);`).FindSubmatch(src)
	if m == nil {
		t.Fatal("js/constants.js has no MAX_ID_BYTES")
	}
	if got, want := string(m[1]), strconv.Itoa(surface.MaxIDBytes); got != want {
		t.Errorf("js/constants.js MAX_ID_BYTES = %s, surface.MaxIDBytes = %s", got, want)
	}
}
