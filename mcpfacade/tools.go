package mcpfacade

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"pling.dev/agent/surface"
)

// ContextToolName is the read-only tool that reads the page's context
// window; the same view is the resource at ContextURI.
const ContextToolName = "page_context"

// ContextURI is the resource that holds the page's context window.
const ContextURI = "pling://context"

// MetaCapability is the _meta key of a tool that names the capability id the
// tool invokes: a tool name is never parsed back into an id.
const MetaCapability = "pling.dev/capability"

// DefaultRecordEnumLimit is how many record ids a template's record
// parameter lists as an enum at most; past it the parameter says where to
// read them instead.
const DefaultRecordEnumLimit = 20

// maxRecordWindow is the kernel's largest record window: the enum is read
// from one window.
const maxRecordWindow = surface.MaxRecordLimit

// maxToolName is the longest tool name MCP clients accept.
const maxToolName = 128

// toolDef is one tool derived from one capability.
type toolDef struct {
	tool       *mcp.Tool
	capability string
	// key is the encoding of everything a client sees of the tool: two
	// defs with the same key need no list_changed.
	key string
}

// toolName turns a capability id into a name MCP accepts (1 to 128 of
// A-Z a-z 0-9 _ - .): "@", the template separator, becomes "_" and any
// other character "-" and its code point in hex. The page bridge for WebMCP
// names tools the same way, so an agent sees one name in both places.
func toolName(id string) string {
	var b strings.Builder
	for _, r := range id {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '.':
			b.WriteRune(r)
		case r == '@':
			b.WriteByte('_')
		default:
			b.WriteString("-" + strconv.FormatInt(int64(r), 16))
		}
	}
	s := b.String()
	if s == "" {
		s = "tool"
	}
	return cut(s, maxToolName)
}

// cut shortens an ASCII name to n bytes.
func cut(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// uniqueName returns base, or base with the first free "-N" suffix.
func uniqueName(base string, taken map[string]bool) string {
	if !taken[base] {
		return base
	}
	for n := 2; ; n++ {
		suffix := "-" + strconv.Itoa(n)
		if name := cut(base, maxToolName-len(suffix)) + suffix; !taken[name] {
			return name
		}
	}
}

// templateKind is the record kind of a template id name@kind, or "".
func templateKind(id string) string {
	if i := strings.LastIndexByte(id, '@'); i >= 0 {
		return id[i+1:]
	}
	return ""
}

// recordEnum returns the ids a template may name when the description
// shows every record and at most limit of them have the template's kind;
// otherwise nil, and the parameter's description says where to find ids.
func recordEnum(c surface.Capability, ctx surface.Context, limit int) []string {
	if limit <= 0 || ctx.RecordsTotal > len(ctx.Records) {
		return nil
	}
	kind := templateKind(c.ID)
	var ids []string
	seen := map[string]bool{}
	for _, r := range ctx.Records {
		if r.ID == "" || seen[r.ID] || (kind != "" && r.Kind != kind) {
			continue
		}
		seen[r.ID] = true
		ids = append(ids, r.ID)
	}
	if len(ids) == 0 || len(ids) > limit {
		return nil
	}
	return ids
}

// toolDefs maps a description to tools: one per capability, in the
// description's order. Names are made unique against the context tool
// first, so that tool keeps its name whatever the page calls its actions.
func toolDefs(d *surface.Description, enumLimit int) []toolDef {
	taken := map[string]bool{ContextToolName: true}
	defs := make([]toolDef, 0, len(d.Capabilities))
	for _, c := range d.Capabilities {
		name := uniqueName(toolName(c.ID), taken)
		taken[name] = true
		t := &mcp.Tool{
			Name:        name,
			Title:       c.ID,
			Description: toolDescription(c),
			InputSchema: inputSchema(c, recordEnum(c, d.Context, enumLimit)),
			Annotations: annotations(c),
			Meta:        mcp.Meta{MetaCapability: c.ID},
		}
		key, err := json.Marshal(t)
		if err != nil {
			continue // cannot happen: every part was decoded from JSON
		}
		defs = append(defs, toolDef{tool: t, capability: c.ID, key: string(key)})
	}
	return defs
}

// annotations maps the page's own declaration of effect onto MCP's hints.
// Anything that is not exactly a read or a write is left to MCP's default
// (may be destructive), so a missing or new effect never looks harmless.
func annotations(c surface.Capability) *mcp.ToolAnnotations {
	a := &mcp.ToolAnnotations{Title: c.ID}
	switch c.Effect {
	case "read":
		a.ReadOnlyHint = true
	case "write":
		a.DestructiveHint = new(false)
	case "destructive":
		a.DestructiveHint = new(true)
	}
	return a
}

// toolDescription is the capability's description with what an agent must
// know before calling: the record it acts on, and whether a person has to
// approve. Approval stays the page's: the facade only says so.
func toolDescription(c surface.Capability) string {
	parts := []string{sentence(c.Description, c.ID)}
	if c.Record != nil {
		kind := templateKind(c.ID)
		if kind == "" {
			kind = "record"
		}
		parts = append(parts, fmt.Sprintf("Acts on one %s, named by %q.", kind, c.Record.Param))
	}
	switch c.Effect {
	case "read":
		parts = append(parts, "Changes no data (it may change what the page shows).")
	case "destructive":
		parts = append(parts, "Destructive: what it changes may not be recoverable.")
	}
	switch c.Approval {
	case "", "none":
	case "always":
		parts = append(parts, "Needs a person's approval in the page every time: the call returns at once with the approval pending, and nothing changes unless the person approves.")
	case "ask":
		parts = append(parts, "The page may ask a person to approve it: the result then says the approval is pending, and nothing changes unless the person approves.")
	default:
		parts = append(parts, fmt.Sprintf("Approval %q: the page may need a person to approve it; the result says when it does.", c.Approval))
	}
	if c.Handoff != "" {
		parts = append(parts, "Hands over to a person: "+sentence(c.Handoff, ""))
	}
	return strings.Join(parts, " ")
}

func sentence(s, fallback string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		s = fallback
	}
	if s == "" || strings.HasSuffix(s, ".") || strings.HasSuffix(s, "!") || strings.HasSuffix(s, "?") {
		return s
	}
	return s + "."
}

// inputSchema is the capability's schema with, for a template, its record
// parameter added and required. The business part is never loosened: the
// surface validates it after taking the record parameter out.
func inputSchema(c surface.Capability, ids []string) map[string]any {
	schema := objectSchema(c.InputSchema)
	if c.Record == nil {
		return schema
	}
	param := c.Record.Param
	prop := map[string]any{"type": "string", "minLength": 1, "description": recordParamDescription(c, ids)}
	if ids != nil {
		prop["enum"] = ids
	}
	props, _ := schema["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
	}
	props[param] = prop
	schema["properties"] = props
	required := []any{param}
	if old, ok := schema["required"].([]any); ok {
		for _, r := range old {
			if r != param {
				required = append(required, r)
			}
		}
	}
	schema["required"] = required
	return schema
}

// objectSchema decodes a capability's schema as an object schema: MCP
// requires type "object" at the top. A schema without a type gets it; any
// other schema is kept whole under allOf.
func objectSchema(raw json.RawMessage) map[string]any {
	var v any
	if len(bytes.TrimSpace(raw)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber() // bounds such as maxLength stay exactly as written
		if dec.Decode(&v) != nil {
			v = nil
		}
	}
	dropHeaderBindings(v)
	m, isObj := v.(map[string]any)
	switch {
	case v == nil:
		return map[string]any{"type": "object"}
	case isObj && m["type"] == nil:
		m["type"] = "object"
		return m
	case isObj && m["type"] == "object":
		return m
	}
	return map[string]any{"type": "object", "allOf": []any{v}}
}

// dropHeaderBindings removes x-mcp-header from a schema: that keyword makes
// an MCP client copy an argument into an HTTP header, which is the
// transport's business and not the page's.
func dropHeaderBindings(v any) {
	switch v := v.(type) {
	case map[string]any:
		delete(v, "x-mcp-header")
		for _, e := range v {
			dropHeaderBindings(e)
		}
	case []any:
		for _, e := range v {
			dropHeaderBindings(e)
		}
	}
}

func recordParamDescription(c surface.Capability, ids []string) string {
	kind := templateKind(c.ID)
	if kind == "" {
		kind = "record"
	}
	if ids != nil {
		return fmt.Sprintf("Id of the %s to act on.", kind)
	}
	s := fmt.Sprintf("Id of the %s to act on; %d can be named now", kind, c.Record.Total)
	if c.Record.Offscreen > 0 {
		s += fmt.Sprintf(" (%d of them not in view)", c.Record.Offscreen)
	}
	return s + ". Read the ids from the " + ContextToolName + " tool or the " + ContextURI +
		" resource: context.recordIds lists them, and context.records shows a window of records with their fields."
}

// contextTool is the read-only tool over describe's context window.
func contextTool() *mcp.Tool {
	return &mcp.Tool{
		Name:  ContextToolName,
		Title: "Page context",
		Description: "Read what the page shows now: its route, the ids of the records that can be named, " +
			"a window of records with their fields (by offset and limit, or by id), its state, the notices it shows, " +
			"and the actions that are unavailable and why. Changes nothing.",
		InputSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"offset": map[string]any{"type": "integer", "minimum": 0, "description": "First record of the window."},
				"limit":  map[string]any{"type": "integer", "minimum": 0, "description": "Records in the window; the page caps it."},
				"record": map[string]any{
					"description": "Read these records instead of a window: one id, or 1 to 20 ids.",
					"anyOf": []any{
						map[string]any{"type": "string", "minLength": 1},
						map[string]any{"type": "array", "items": map[string]any{"type": "string", "minLength": 1}, "minItems": 1, "maxItems": 20},
					},
				},
			},
			"additionalProperties": false,
		},
		Annotations: &mcp.ToolAnnotations{Title: "Page context", ReadOnlyHint: true},
	}
}
