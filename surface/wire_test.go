package surface_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"pling.dev/agent/surface"
	"pling.dev/agent/surface/surfacetest"
)

// wMustMatch checks that AppendJSON(v) is byte for byte json.Marshal(v), and
// that both fail together.
func wMustMatch(t *testing.T, v any) {
	t.Helper()
	want, werr := json.Marshal(v)
	prefix := []byte("prefix:")
	got, gerr := surface.AppendJSON(append([]byte(nil), prefix...), v)
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("error mismatch for %#v: encoding/json %v, AppendJSON %v", v, werr, gerr)
	}
	if werr != nil {
		if !bytes.Equal(got, prefix) {
			t.Fatalf("failed AppendJSON changed the buffer: %q", got)
		}
		return
	}
	if !bytes.HasPrefix(got, prefix) || !bytes.Equal(got[len(prefix):], want) {
		t.Fatalf("AppendJSON differs from encoding/json\n got: %s\nwant: %s", got[min(len(prefix), len(got)):], want)
	}
}

func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	strs := []string{
		"", "plain", `quote " backslash \ slash /`, "<script>&amp;</script>", "tab\tnl\ncr\rbs\bff\f",
		"\x00\x01\x1f\x7f", "é ü 中文 🙂", "line\u2028para\u2029", "bad \xff utf8 \xc3", "\xed\xa0\x80 surrogate bytes",
		"\ufeffbom", "\ufffd replacement",
	}
	raws := []string{
		`{"a": 1, "b" : [true, false, null, "x<y>&z"], "c": {"d": -1.5e+10}}`, " \t\n 42 \r\n", `"\u2028 \ud800 \/ \" \\"`,
		"\"raw \xe2\x80\xa8 sep\"", "[]", "{}", `[ [ ] , { } ]`, `0`, `-0.0e-0`, `1E5`,
		// Not JSON: encoding/json refuses these, and so must AppendJSON.
		``, `{`, `[1,]`, `{"a" 1}`, `01`, `1.`, `.5`, `+1`, `1e`, `tru`, `nul`, `"\x01"`, `"\q"`, `"\u12g4"`, `1 2`, `"abc`,
		`{"a":1,}`, `[1 2]`, `{1:2}`, `NaN`, strings.Repeat("[", 600) + strings.Repeat("]", 600),
	}
	nums := []string{"0", "-0", "12", "1.50", "1e400", "-12.5E-7", "", "01", "1.", "abc", "+1", "0x10", " 1"}
	floats := []float64{0, -0.0, 1, -1.5, 1e20, 1e21, 1e-6, 1e-7, 123456789.123, math.MaxFloat64, math.SmallestNonzeroFloat64, 5e-324, 1.0 / 3}

	var values []any
	for _, s := range strs {
		values = append(values, s, map[string]any{s: s}, []string{s})
	}
	for _, r := range raws {
		values = append(values, json.RawMessage(r))
	}
	for _, n := range nums {
		values = append(values, json.Number(n))
	}
	for _, f := range floats {
		values = append(values, f, -f, float32(f))
	}
	values = append(values,
		nil, true, false, 0, -7, int64(math.MinInt64), uint64(math.MaxUint64), int32(-3),
		math.NaN(), math.Inf(1), float32(math.Inf(-1)),
		map[string]any(nil), []any(nil), []string(nil), json.RawMessage(nil), json.RawMessage{},
		map[string]any{}, []any{}, map[string]any{"b": 1, "a": []any{"x", json.Number("2"), nil, map[string]any{"z": true, "y": false}}},
		map[string]any{"k0": 0, "k1": 1, "k2": 2, "k3": 3, "k4": 4, "k5": 5, "k6": 6, "k7": 7, "k8": 8, "k9": 9, "k10": 10,
			"k11": 11, "k12": 12, "k13": 13, "k14": 14, "k15": 15, "k16": 16, "k17": 17, "é": "é", "A": "a", "<": ">"},
		map[string]any{"time": time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), "struct": struct{ X int }{1}, "ch": make(chan int)},
		[]any{map[string]string{"b": "1", "a": "2"}, surface.Code("X"), []int{1, 2}},
		(*surface.Response)(nil), (*surface.Description)(nil), (*surface.Error)(nil), (*surface.Observation)(nil), (*surface.AuditEvent)(nil),
	)

	full := &surface.Description{
		Protocol: surface.Protocol, App: "orders<&>",
		Capabilities: []surface.Capability{
			{ID: "a", Description: "d", InputSchema: json.RawMessage(` { "type" : "object" } `), Effect: "read", Approval: "none",
				Fidelity: "exact", Source: "s", ScopePath: []string{"x", "y"}, Handoff: "h", FlowSteps: []string{"1"}, Offscreen: true,
				Record: &surface.CapabilityRecord{Param: "record", Total: 3, Offscreen: 1}},
			{ID: "b", Record: &surface.CapabilityRecord{}},
			{ID: "c", ScopePath: []string{}, InputSchema: json.RawMessage{}},
		},
		CapabilitiesTotal: 9, CapabilitiesUnchanged: true,
		Context: surface.Context{
			Route:   "/r",
			Regions: []surface.Region{{ID: "r"}, {ID: "s", Label: "l", Description: "d"}}, RegionsTotal: 4,
			Records: []surface.RecordView{{ID: "1"}, {ID: "2", Kind: "k", Fields: map[string]any{"n": json.Number("1"), "s": "x"}, Offscreen: true},
				{ID: "3", Fields: map[string]any{}}},
			RecordIDs: []string{"1", "2"}, RecordIDsTotal: 7,
			State: map[string]any{"f": "all"}, StateTotal: 3,
			Feedback:     []surface.Feedback{{Message: "m"}, {Level: "warning", Message: "m", Record: "1"}},
			Unavailable:  []surface.Unavailable{{ID: "u"}, {ID: "v", Reason: "r"}},
			RecordsTotal: 1, FeedbackTotal: 2, UnavailableTotal: 3,
		},
	}
	values = append(values, full, &surface.Description{}, &surface.Description{Context: surface.Context{
		Regions: []surface.Region{}, Records: []surface.RecordView{}, RecordIDs: []string{}, State: map[string]any{},
		Feedback: []surface.Feedback{}, Unavailable: []surface.Unavailable{},
	}})

	errs := []*surface.Error{
		{Code: surface.CodeInvalidRequest},
		{Code: surface.CodeRateLimited, Message: "slow down", RetryAfterMs: 1500},
		{Code: surface.CodeInvalidRequest, Message: "m", Violations: []surface.Violation{{InstancePath: "/a", Keyword: "type", Message: "x <y>"}}},
		{Code: surface.CodeInvalidRequest, Violations: []surface.Violation{}},
	}
	obs := []*surface.Observation{
		{},
		{State: map[string]any{"a": nil}},
		{StateOmitted: 2},
		{RecordsOmitted: 1, StateOmitted: 2},
		{Records: []surface.ObservedRecord{{ID: "1", Removed: true}, {ID: "2", Fields: map[string]any{"note": "x", "gone": nil}, FieldsOmitted: 3}},
			RecordsOmitted: 1, State: map[string]any{"x": json.Number("1")}, StateOmitted: 4},
		{Records: []surface.ObservedRecord{}, State: map[string]any{}},
	}
	for _, e := range errs {
		values = append(values, e, &surface.Response{Protocol: surface.Protocol, ID: "i", Error: e})
	}
	for _, o := range obs {
		values = append(values, o, &surface.Response{Protocol: surface.Protocol, ID: "i", OK: true, Result: json.RawMessage(`{"done":true}`), After: o})
	}
	values = append(values,
		&surface.Response{},
		&surface.Response{Protocol: surface.Protocol, ID: "d", OK: true, Result: full},
		&surface.Response{Protocol: surface.Protocol, ID: "d", OK: true, Result: (*surface.Description)(nil)},
		&surface.Response{Protocol: surface.Protocol, ID: "d", OK: true, Result: json.RawMessage(nil)},
		&surface.Response{Protocol: surface.Protocol, ID: "d", OK: true, Result: json.RawMessage(` [1, {"a" :"<"}] `)},
		&surface.Response{Protocol: surface.Protocol, ID: "d", OK: true, Result: json.RawMessage(`{bad`)},
		&surface.Response{Protocol: surface.Protocol, ID: "d", OK: true, Result: map[string]any{"x": math.NaN()}},
		&surface.Response{Protocol: surface.Protocol, ID: "d", OK: true, Result: "text"},
	)

	t0 := time.Date(2026, 11, 30, 4, 5, 6, 789000000, time.UTC)
	for _, tm := range []time.Time{{}, t0, t0.In(time.FixedZone("x", 5*3600+30*60)), t0.In(time.FixedZone("y", -24*3600)),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC), time.Unix(0, 1)} {
		ev := surface.AuditEvent{RequestID: "r", Method: "invoke", Capability: "c", RecordID: "1", SessionID: "s", AgentID: "a",
			UserID: "u", DelegationID: "d", Outcome: surface.OutcomeOK, Code: "X", DurationMs: 0.125, Time: tm}
		values = append(values, ev, &ev, surface.AuditEvent{Time: tm, DurationMs: 1e-9})
	}
	values = append(values,
		surface.CallContext{}, surface.CallContext{RequestID: "r", Capability: "c", Record: "1", SessionID: "s", AgentID: "a", UserID: "u", DelegationID: "d"},
		surface.ViewQuery{}, surface.ViewQuery{IDs: []string{"a", "b"}, Offset: 1, Limit: 2, MaxRecordIDs: 3}, surface.ViewQuery{IDs: []string{}},
	)

	for _, v := range values {
		wMustMatch(t, v)
	}
}

// TestHandleJSONMatchesEncodingJSON checks the kernel's own encoding path
// (including the cached capability list) against encoding/json for real
// describe and invoke responses.
func TestHandleJSONMatchesEncodingJSON(t *testing.T) {
	for _, version := range []string{"", "v1"} {
		t.Run("version="+version, func(t *testing.T) {
			page := surfacetest.Orders(12)
			reg := func(ctx context.Context, q surface.ViewQuery) (*surface.View, error) {
				v, err := page.View(ctx, q)
				if v != nil {
					v.ActionsVersion = version
				}
				return v, err
			}
			s, err := surface.New(surface.Options{Registry: reg, Execute: page.Execute, Now: surfacetest.NewClock().Now, App: "orders",
				Limits: surface.Limits{MaxCapabilities: 2}})
			if err != nil {
				t.Fatal(err)
			}
			reqs := []string{
				`{"protocol":"pling.surface/0.1","id":"d1","method":"describe"}`,
				`{"protocol":"pling.surface/0.1","id":"d2","method":"describe","input":{"capabilities":"changed","limit":3}}`,
				`{"protocol":"pling.surface/0.1","id":"d3","method":"describe","input":{"record":["SO-1002","SO-1001"]}}`,
				`{"protocol":"pling.surface/0.1","id":"i1","method":"invoke","capability":"update_note@order","input":{"record":"SO-1002","note":"<b>&"}}`,
				`{"protocol":"pling.surface/0.1","id":"i2","method":"invoke","capability":"update_note@order","input":{"record":"SO-1002","note":7}}`,
			}
			for _, req := range reqs {
				got := s.HandleJSON(context.Background(), []byte(req))
				want, err := json.Marshal(s.Handle(context.Background(), []byte(strings.Replace(req, `"id":"`, `"id":"x`, 1))))
				if err != nil {
					t.Fatal(err)
				}
				want = bytes.Replace(want, []byte(`"id":"x`), []byte(`"id":"`), 1)
				// The second invoke of i1 sees the note already changed: compare without "after".
				if strings.Contains(req, `"i1"`) {
					got, want = cutAfter(got), cutAfter(want)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("request %s\n got: %s\nwant: %s", req, got, want)
				}
			}
		})
	}
}

func cutAfter(b []byte) []byte {
	if i := bytes.Index(b, []byte(`,"after":`)); i >= 0 {
		return append(append([]byte(nil), b[:i]...), '}')
	}
	return b
}

// FuzzAppendJSON compares AppendJSON with encoding/json on decoded trees,
// on strings and on raw JSON text.
func FuzzAppendJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,"<x>",null,true],"b":{"c":-1.5e3}}`, `"\u2028"`, "\"\xff\"", `[{}]`, ` 1 `, `{"a" 1}`, "\u2029<&>"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		wMustMatch(t, string(data))
		wMustMatch(t, json.RawMessage(data))
		wMustMatch(t, &surface.Response{Protocol: surface.Protocol, ID: string(data), OK: true, Result: json.RawMessage(data)})
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) == nil {
			wMustMatch(t, v)
			wMustMatch(t, &surface.Response{Protocol: surface.Protocol, ID: "f", OK: true, Result: v})
		}
		var f64 any
		if json.Unmarshal(data, &f64) == nil {
			wMustMatch(t, f64)
		}
	})
}

// TestAppendJSONWireTypesDoNotAllocate pins that the wire types are written
// directly, not through reflection (which allocates on every value).
func TestAppendJSONWireTypesDoNotAllocate(t *testing.T) {
	d := &surface.Description{Protocol: surface.Protocol, App: "orders",
		Capabilities: []surface.Capability{{ID: "a", InputSchema: json.RawMessage(`{"type":"object"}`), ScopePath: []string{"x"},
			Record: &surface.CapabilityRecord{Param: "record", Total: 2}}},
		Context: surface.Context{Regions: []surface.Region{{ID: "r"}}, RecordIDs: []string{"1"},
			Records: []surface.RecordView{{ID: "1", Fields: map[string]any{"n": json.Number("1"), "s": "x", "b": true, "z": nil}}},
			State:   map[string]any{"f": "all"}}}
	values := map[string]any{
		"describe": &surface.Response{Protocol: surface.Protocol, ID: "d", OK: true, Result: d},
		"invoke": &surface.Response{Protocol: surface.Protocol, ID: "i", OK: true, Result: json.RawMessage(`{"ok": true}`),
			After: &surface.Observation{Records: []surface.ObservedRecord{{ID: "1", Fields: map[string]any{"note": "x"}}}}},
		"error": &surface.Response{Protocol: surface.Protocol, ID: "e", Error: &surface.Error{Code: surface.CodeRateLimited, RetryAfterMs: 5}},
		"audit": &surface.AuditEvent{RequestID: "r", Method: "describe", Outcome: surface.OutcomeOK, DurationMs: 0.5, Time: time.Unix(1, 2).UTC()},
	}
	buf := make([]byte, 0, 8<<10)
	for name, v := range values {
		t.Run(name, func(t *testing.T) {
			if n := testing.AllocsPerRun(50, func() { _, _ = surface.AppendJSON(buf[:0], v) }); n != 0 {
				t.Errorf("AppendJSON allocated %v times per call", n)
			}
		})
	}
}
