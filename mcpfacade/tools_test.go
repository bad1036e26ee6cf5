package mcpfacade

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"pling.dev/agent/surface"
)

func TestToolName(t *testing.T) {
	tests := []struct{ id, want string }{
		{"orders.search", "orders.search"},
		{"update_note@order", "update_note_order"},
		{"a b/c", "a-20b-2fc"},
		{"ünï", "-fcn-ef"},
		{"", "tool"},
		{strings.Repeat("x", 200), strings.Repeat("x", 128)},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			if got := toolName(tt.id); got != tt.want {
				t.Errorf("toolName(%q) = %q, want %q", tt.id, got, tt.want)
			}
		})
	}
}

func TestToolDefsNames(t *testing.T) {
	d := &surface.Description{Capabilities: []surface.Capability{
		{ID: "a@b"}, {ID: "a_b"}, {ID: ContextToolName}, {ID: "a.b"}, {ID: strings.Repeat("y", 130)}, {ID: strings.Repeat("y", 129)},
	}}
	var got []string
	for _, def := range toolDefs(d, DefaultRecordEnumLimit) {
		got = append(got, def.tool.Name)
		if !validName(def.tool.Name) {
			t.Errorf("%q is not a valid MCP tool name", def.tool.Name)
		}
	}
	want := []string{"a_b", "a_b-2", ContextToolName + "-2", "a.b", strings.Repeat("y", 128), strings.Repeat("y", 126) + "-2"}
	if !slices.Equal(got, want) {
		t.Errorf("names %q, want %q", got, want)
	}
}

func validName(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}

func TestAnnotations(t *testing.T) {
	tests := []struct {
		effect   string
		readOnly bool
		destroy  string // "", "true", "false"
	}{
		{"read", true, ""},
		{"write", false, "false"},
		{"destructive", false, "true"},
		// Unknown or missing: MCP's default, which is "may destroy".
		{"", false, ""},
		{"delete", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.effect, func(t *testing.T) {
			a := annotations(surface.Capability{ID: "x", Effect: tt.effect})
			destroy := ""
			if a.DestructiveHint != nil {
				destroy = fmt.Sprint(*a.DestructiveHint)
			}
			if a.ReadOnlyHint != tt.readOnly || destroy != tt.destroy {
				t.Errorf("readOnly %v destructive %q, want %v %q", a.ReadOnlyHint, destroy, tt.readOnly, tt.destroy)
			}
		})
	}
}

func TestToolDescription(t *testing.T) {
	tests := []struct {
		c    surface.Capability
		want []string
		not  []string
	}{
		{c: surface.Capability{ID: "x", Description: "Do x", Approval: "none"}, want: []string{"Do x."}, not: []string{"approv"}},
		{c: surface.Capability{ID: "x", Approval: "always"}, want: []string{"x.", "approval in the page every time", "pending"}},
		{c: surface.Capability{ID: "x", Approval: "ask"}, want: []string{"may ask a person"}},
		{c: surface.Capability{ID: "x", Approval: "sometimes"}, want: []string{`Approval "sometimes"`}},
		{c: surface.Capability{ID: "x", Effect: "destructive", Handoff: "opens the payment form"}, want: []string{"Destructive", "Hands over to a person: opens the payment form."}},
		{c: surface.Capability{ID: "ship@parcel", Record: &surface.CapabilityRecord{Param: "target"}}, want: []string{`one parcel, named by "target"`}},
	}
	for _, tt := range tests {
		t.Run(tt.c.ID+tt.c.Approval+tt.c.Effect, func(t *testing.T) {
			got := toolDescription(tt.c)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("%q lacks %q", got, w)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(got, n) {
					t.Errorf("%q has %q", got, n)
				}
			}
		})
	}
}

func TestInputSchema(t *testing.T) {
	rec := &surface.CapabilityRecord{Param: "record", Total: 48, Offscreen: 40}
	tests := []struct {
		name   string
		schema string
		record *surface.CapabilityRecord
		ids    []string
		want   string
	}{
		{name: "none", want: `{"type":"object"}`},
		{name: "not JSON", schema: `{`, want: `{"type":"object"}`},
		{name: "no type", schema: `{"properties":{"q":{"type":"string"}}}`, want: `{"properties":{"q":{"type":"string"}},"type":"object"}`},
		{name: "another type", schema: `{"type":"string"}`, want: `{"allOf":[{"type":"string"}],"type":"object"}`},
		{name: "boolean schema", schema: `true`, want: `{"allOf":[true],"type":"object"}`},
		{name: "numbers kept exact", schema: `{"type":"object","properties":{"n":{"type":"number","maximum":1e400}}}`,
			want: `{"properties":{"n":{"maximum":1e400,"type":"number"}},"type":"object"}`},
		{name: "header binding dropped", schema: `{"type":"object","properties":{"q":{"type":"string","x-mcp-header":"X-Q"}}}`,
			want: `{"properties":{"q":{"type":"string"}},"type":"object"}`},
		{name: "template with enum", record: rec, ids: []string{"SO-1", "SO-2"},
			schema: `{"type":"object","properties":{"note":{"type":"string"}},"required":["note"],"additionalProperties":false}`,
			want:   `{"additionalProperties":false,"properties":{"note":{"type":"string"},"record":{"description":"Id of the record to act on.","enum":["SO-1","SO-2"],"minLength":1,"type":"string"}},"required":["record","note"],"type":"object"}`},
		{name: "template replaces a page property of the same name", record: rec, ids: []string{"A"},
			schema: `{"type":"object","properties":{"record":{"type":"integer"}},"required":["record"]}`,
			want:   `{"properties":{"record":{"description":"Id of the record to act on.","enum":["A"],"minLength":1,"type":"string"}},"required":["record"],"type":"object"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := inputSchema(surface.Capability{ID: "x", InputSchema: json.RawMessage(tt.schema), Record: tt.record}, tt.ids)
			b, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Errorf("schema\n %s\nwant\n %s", b, tt.want)
			}
		})
	}
}

func TestRecordEnum(t *testing.T) {
	recs := func(kinds ...string) []surface.RecordView {
		var out []surface.RecordView
		for i, k := range kinds {
			out = append(out, surface.RecordView{ID: fmt.Sprintf("R%d", i+1), Kind: k})
		}
		return out
	}
	tests := []struct {
		name  string
		id    string
		ctx   surface.Context
		limit int
		want  []string
	}{
		{name: "all shown", id: "a@order", ctx: surface.Context{Records: recs("order", "order"), RecordsTotal: 2}, limit: 5, want: []string{"R1", "R2"}},
		{name: "kind filter", id: "a@order", ctx: surface.Context{Records: recs("order", "customer", "order"), RecordsTotal: 3}, limit: 5, want: []string{"R1", "R3"}},
		{name: "no kind in id", id: "a", ctx: surface.Context{Records: recs("order", "customer"), RecordsTotal: 2}, limit: 5, want: []string{"R1", "R2"}},
		{name: "more than shown", id: "a@order", ctx: surface.Context{Records: recs("order"), RecordsTotal: 2}, limit: 5},
		{name: "over the limit", id: "a@order", ctx: surface.Context{Records: recs("order", "order", "order"), RecordsTotal: 3}, limit: 2},
		{name: "none of the kind", id: "a@order", ctx: surface.Context{Records: recs("customer"), RecordsTotal: 1}, limit: 5},
		{name: "enums off", id: "a@order", ctx: surface.Context{Records: recs("order"), RecordsTotal: 1}, limit: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := recordEnum(surface.Capability{ID: tt.id}, tt.ctx, tt.limit)
			if !slices.Equal(got, tt.want) {
				t.Errorf("enum %v, want %v", got, tt.want)
			}
		})
	}
}

// A page's description is untrusted input: nothing in it may stop the
// facade from serving the rest.
func TestApplySurvivesOddCapabilities(t *testing.T) {
	f := New(nil, Options{})
	d := &surface.Description{Capabilities: []surface.Capability{
		{ID: "ok", InputSchema: json.RawMessage(`{"type":"object"}`)},
		{ID: "header", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"object","x-mcp-header":"A"}}}`)},
		{ID: "weird", InputSchema: json.RawMessage(`[1,2]`)},
	}}
	f.apply(toolDefs(d, 5))
	got := f.ToolNames()
	slices.Sort(got)
	if !slices.Equal(got, []string{"header", "ok", "weird"}) {
		t.Errorf("tools %v", got)
	}
	// The same list again changes nothing; an empty one removes all.
	f.apply(toolDefs(d, 5))
	f.apply(nil)
	if got := f.ToolNames(); len(got) != 0 {
		t.Errorf("tools left %v", got)
	}
}
