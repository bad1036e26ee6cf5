package mcpfacade

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"testing"

	"pling.dev/agent/surface"
)

// The rules pling-mcp shares with the page runtime's WebMCP bridge and the
// extension panel are held by vectors under testdata/rules, which the node
// tests run too (js/test/rules.test.mjs): a difference is a bug in one of
// them, not in the vector.

func readRules(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile("../testdata/rules/" + name)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

type toolVectors struct {
	RecordEnum []struct {
		Name       string             `json:"name"`
		Capability surface.Capability `json:"capability"`
		Context    surface.Context    `json:"context"`
		Limit      int                `json:"limit"`
		Enum       []string           `json:"enum"`
	} `json:"recordEnum"`
	InputSchema []struct {
		Name       string             `json:"name"`
		Capability surface.Capability `json:"capability"`
		Context    surface.Context    `json:"context"`
		Schema     any                `json:"schema"`
	} `json:"inputSchema"`
}

func TestSharedRecordEnumVectors(t *testing.T) {
	var v toolVectors
	readRules(t, "tools.json", &v)
	if len(v.RecordEnum) < 10 {
		t.Fatalf("%d record enum vectors", len(v.RecordEnum))
	}
	for _, c := range v.RecordEnum {
		t.Run(c.Name, func(t *testing.T) {
			if got := recordEnum(c.Capability, c.Context, c.Limit); !reflect.DeepEqual(got, c.Enum) {
				t.Errorf("recordEnum = %q, want %q", got, c.Enum)
			}
		})
	}
}

func TestSharedInputSchemaVectors(t *testing.T) {
	var v toolVectors
	readRules(t, "tools.json", &v)
	for _, c := range v.InputSchema {
		t.Run(c.Name, func(t *testing.T) {
			schema := inputSchema(c.Capability, recordEnum(c.Capability, c.Context, DefaultRecordEnumLimit))
			// The record parameter's description is each tool list's own
			// wording; the vector holds the shape.
			if r := c.Capability.Record; r != nil {
				delete(schema["properties"].(map[string]any)[r.Param].(map[string]any), "description")
			}
			b, _ := json.Marshal(schema)
			var got any
			_ = json.Unmarshal(b, &got)
			if !reflect.DeepEqual(got, c.Schema) {
				want, _ := json.Marshal(c.Schema)
				t.Errorf("inputSchema =\n %s\nwant\n %s", b, want)
			}
		})
	}
}

func TestSharedPageTextVectors(t *testing.T) {
	var v struct {
		Visible []rune `json:"visible"`
		Shown   []rune `json:"shown"`
	}
	readRules(t, "pagetext.json", &v)
	for _, r := range v.Visible {
		if want := fmt.Sprintf(`\u{%04X}`, r); pageText(string(r), 10, false) != want || !hidden(r) {
			t.Errorf("U+%04X: pageText %q (want %s), hidden %v", r, pageText(string(r), 10, false), want, hidden(r))
		}
	}
	for _, r := range v.Shown {
		if pageText(string(r), 10, false) != string(r) || hidden(r) {
			t.Errorf("U+%04X: pageText %q, hidden %v; want it shown as itself", r, pageText(string(r), 10, false), hidden(r))
		}
	}
}

func TestSharedProtocolString(t *testing.T) {
	var v struct {
		Protocol string `json:"protocol"`
	}
	readRules(t, "protocol.json", &v)
	if v.Protocol != surface.Protocol {
		t.Fatalf("testdata/rules/protocol.json says %q, the kernel %q", v.Protocol, surface.Protocol)
	}
}
