package mcpfacade

import (
	"bytes"
	"crypto/sha256"
	"encoding/base32"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

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

// toolDef is one tool derived from one capability.
type toolDef struct {
	tool       *mcp.Tool
	capability string
	// key is the encoding of everything a client sees of the tool: two
	// defs with the same key need no list_changed.
	key string
}

// maxToolName is the longest tool name every major model API accepts in a
// function name (MCP itself allows 128).
const maxToolName = 64

// hashSep separates a hashed name's readable prefix from its hash. A plain
// name never holds a run of three "-", and a prefix holds no "-" at all.
const hashSep = "---"

// hashLen is how many base32 characters of the id's SHA-256 a hashed name
// keeps: 80 bits, so that no page can find a second id for a name it does
// not own.
const hashLen = 16

// reservedNames are the facade's own tools: no capability is ever named so.
var reservedNames = map[string]bool{ContextToolName: true}

var nameHash = base32.StdEncoding.WithPadding(base32.NoPadding)

// toolName names a capability from its id alone, so that a name keeps its
// meaning whatever else the page lists and in whatever order. Every name
// matches ^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$, the function-name pattern of the
// major model APIs, and no two ids get the same name:
//
//   - A plain id (lower-case letters, digits and "_", in parts joined by
//     single "." or "@") is written with "." as "-" and "@" as "--":
//     orders.search is orders-search, update_note@order is
//     update_note--order. Reading the runs of "-" back gives the id.
//   - An id with a capital letter is hashed (below), so that no two names,
//     the facade's own included, differ only in letter case: a client or a
//     model that folds case still tells them apart.
//   - Any other id, a plain one that would be too long or start with a
//     digit, and one that would take a facade tool's name, is its letters,
//     digits and "_" (others as "_"), cut, then "---" and 80 bits of the
//     SHA-256 of the exact id.
//
// Two hashed names are equal only if the hashes are: toolDefs withholds
// both ids rather than let one name mean two things.
func toolName(id string) string {
	if n, ok := plainName(id); ok && !reservedNames[n] {
		return n
	}
	return hashedName(id)
}

func plainName(id string) (string, bool) {
	if id == "" || len(id) > maxToolName || !startsName(id[0]) {
		return "", false
	}
	b := make([]byte, 0, len(id)+8)
	sep := true // no separator first, none twice in a row
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case c >= 'A' && c <= 'Z':
			return "", false // hashed: no two plain names differ only in case
		case nameByte(c):
			b = append(b, c)
			sep = false
		case (c == '.' || c == '@') && !sep:
			b = append(b, '-')
			if c == '@' {
				b = append(b, '-')
			}
			sep = true
		default:
			return "", false
		}
	}
	if sep || len(b) > maxToolName {
		return "", false
	}
	return string(b), true
}

func hashedName(id string) string {
	sum := sha256.Sum256([]byte(id))
	h := strings.ToLower(nameHash.EncodeToString(sum[:]))[:hashLen]
	most := maxToolName - len(hashSep) - hashLen
	b := make([]byte, 0, maxToolName)
	for _, r := range id {
		if len(b) == most {
			break
		}
		if r < utf8.RuneSelf && nameByte(byte(r)) {
			b = append(b, byte(r))
		} else {
			b = append(b, '_')
		}
	}
	if len(b) == 0 || !startsName(b[0]) {
		if len(b) == most {
			b = b[:most-1]
		}
		b = append([]byte{'_'}, b...)
	}
	return string(b) + hashSep + h
}

// nameByte: a byte a plain name keeps as it is.
func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// startsName: a byte the strictest model API accepts first.
func startsName(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
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
		if strings.ContainsFunc(r.ID, hidden) || longText(r.ID) {
			return nil // an enum would withhold the tool; the ids are in the context
		}
		seen[r.ID] = true
		ids = append(ids, r.ID)
	}
	if len(ids) == 0 || len(ids) > limit {
		return nil
	}
	return ids
}

// Bounds on what one description may make the facade build and keep.
// A page's reply is bounded at 2 MiB, but a tool costs the facade and the
// SDK far more than its bytes: 15,001 tools took pling-mcp to 127 MB.
const (
	// MaxTools is how many capabilities are offered as tools at most, in
	// the page's order; the log says how many more there were.
	MaxTools = 1000
	// maxSchemaNodes bounds the values and members of one capability's
	// input schema (jsonNodes); a capability with a larger one gets no
	// tool.
	maxSchemaNodes = 5000
	// maxTotalSchemaNodes bounds those of all tools together; past it,
	// capabilities get no tool.
	maxTotalSchemaNodes = 20000
)

// jsonNodes counts the values of a JSON text (each member's value, each
// element, the top value), from its bytes alone: every value but the first
// follows a ':' or a ',' outside strings, or opens an array. A member past
// an object's first is counted twice (its ',' and its ':'), so the count
// is at most twice the values and never fewer. It is linear and allocates
// nothing; text that is not JSON gets some count, and the decoder refuses
// it later.
func jsonNodes(raw []byte) int {
	n := 0
	in, esc := false, false
	for _, c := range raw {
		switch {
		case in && esc:
			esc = false
		case in && c == '\\':
			esc = true
		case in && c == '"':
			in = false
		case in:
		case c == '"':
			in = true
		case c == ':' || c == ',' || c == '[':
			n++
		}
	}
	return n + 1
}

// toolDefs maps a description to tools: one per capability, in the
// description's order, each named from its id alone (toolName). Ids whose
// names collide are all withheld: a name never means two capabilities.
func toolDefs(d *surface.Description, enumLimit int) []toolDef {
	names := make([]string, len(d.Capabilities))
	count := make(map[string]int, len(d.Capabilities))
	folds := make(map[string]int, len(d.Capabilities)+len(reservedNames))
	for n := range reservedNames {
		folds[n]++
	}
	for i, c := range d.Capabilities {
		names[i] = toolName(c.ID)
		count[names[i]]++
		folds[strings.ToLower(c.ID)]++
	}
	defs := make([]toolDef, 0, min(len(d.Capabilities), MaxTools))
	schemaNodes := 0
	for i, c := range d.Capabilities {
		if count[names[i]] > 1 {
			continue
		}
		if len(defs) == MaxTools {
			break
		}
		// Decoded, served and resolved by the SDK, each member of a schema
		// costs hundreds of bytes: one of 150,000 members took pling-mcp
		// to 107 MB. The members are counted before anything is decoded.
		n := jsonNodes(c.InputSchema)
		if n > maxSchemaNodes || schemaNodes+n > maxTotalSchemaNodes {
			continue
		}
		schemaNodes += n
		schema := inputSchema(c, recordEnum(c, d.Context, enumLimit))
		if hidesText(schema) {
			// A parameter name or a value the model must send back as it
			// is cannot be shown otherwise, nor cut: the page gets no tool
			// for it.
			continue
		}
		var flags, notes []string
		if folds[strings.ToLower(c.ID)] > 1 {
			flags = append(flags, "differs from another id only in letter case")
			notes = append(notes, "Its id differs from another only in letter case (another action's, or pling-mcp's own tool's): check the name before calling.")
		}
		if sc := idScripts(c.ID); mixedScripts(sc) {
			flags = append(flags, "mixes scripts: "+strings.Join(sc, ", "))
			notes = append(notes, "Its id mixes scripts ("+strings.Join(sc, ", ")+"): it may look like another id that it is not.")
		}
		title := pageTitle(c.ID)
		if len(flags) > 0 {
			title = strings.TrimSuffix(title, ")") + "; " + strings.Join(flags, "; ") + ")"
		}
		desc := toolDescription(c)
		if len(notes) > 0 {
			desc += " " + strings.Join(notes, " ")
		}
		ann := annotations(c)
		ann.Title = title
		t := &mcp.Tool{
			Name:        names[i],
			Title:       title,
			Description: desc,
			InputSchema: schema,
			Annotations: ann,
			Meta:        mcp.Meta{MetaCapability: pageText(c.ID, maxIDShown, false)},
		}
		key, err := json.Marshal(t)
		if err != nil {
			continue // cannot happen: every part was decoded from JSON
		}
		defs = append(defs, toolDef{tool: t, capability: c.ID, key: string(key)})
	}
	return defs
}

// idScripts names the scripts of the letters of an id (its first
// maxIDShown characters), in the order they first appear: more than one,
// and the id may look like another that it is not (a Cyrillic "а" in
// "аpprove").
func idScripts(id string) []string {
	var found []string
	n := 0
	for _, r := range id {
		if n++; n > maxIDShown {
			break
		}
		if !unicode.IsLetter(r) {
			continue
		}
		name := scriptOf(r)
		if !slices.Contains(found, name) {
			found = append(found, name)
		}
	}
	return found
}

// cjkSets are the sets of scripts that Unicode's "highly restrictive"
// identifier profile (UTS #39) lets one identifier mix: a Japanese,
// Chinese or Korean id is not flagged for its Latin letters or its kana.
var cjkSets = [][]string{
	{"Latin", "Han", "Hiragana", "Katakana"},
	{"Latin", "Han", "Bopomofo"},
	{"Latin", "Han", "Hangul"},
}

// mixedScripts reports scripts that no one identifier should mix.
func mixedScripts(found []string) bool {
	if len(found) < 2 {
		return false
	}
	for _, set := range cjkSets {
		if !slices.ContainsFunc(found, func(s string) bool { return !slices.Contains(set, s) }) {
			return false
		}
	}
	return true
}

// scriptOf is the Unicode script of a letter: the common ones first, then
// every other table.
func scriptOf(r rune) string {
	if r < utf8.RuneSelf {
		return "Latin"
	}
	for _, name := range []string{"Latin", "Cyrillic", "Greek", "Armenian", "Han", "Hiragana", "Katakana", "Hangul", "Arabic", "Hebrew"} {
		if unicode.Is(unicode.Scripts[name], r) {
			return name
		}
	}
	for name, table := range unicode.Scripts {
		if name != "Common" && name != "Inherited" && unicode.Is(table, r) {
			return name
		}
	}
	return "unknown"
}

// annotations maps the page's own declaration of effect onto MCP's hints.
// Anything that is not exactly a read or a write is left to MCP's default
// (may be destructive), so a missing or new effect never looks harmless.
func annotations(c surface.Capability) *mcp.ToolAnnotations {
	a := &mcp.ToolAnnotations{Title: pageTitle(c.ID)}
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

// toolDescription frames the page's words as the page's: a fixed lead in
// the facade's voice, the page's description as one quoted string (a quote
// in it is escaped, so it cannot end early), then what an agent must know
// before calling, in the facade's voice again. Approval stays the page's:
// the facade only says so.
func toolDescription(c surface.Capability) string {
	words := "The page gives no description."
	if strings.TrimSpace(c.Description) != "" {
		words = "In the page's own words: " + pageQuote(c.Description, maxDescriptionShown) + "."
	}
	parts := []string{pageToolLead + " (capability " + pageQuote(c.ID, maxIDShown) + "), not by pling-mcp. " + words}
	if c.Record != nil {
		parts = append(parts, "Acts on one "+pageQuote(recordKind(c), maxIDShown)+" record, named by the argument "+pageQuote(c.Record.Param, maxIDShown)+".")
	}
	switch c.Effect {
	case "read":
		parts = append(parts, "The page declares that it changes no data; that is the page's claim, which pling-mcp cannot check (it may change what the page shows).")
	case "destructive":
		parts = append(parts, "The page declares it destructive: what it changes may not be recoverable.")
	}
	switch c.Approval {
	case "", "none":
	case "always":
		parts = append(parts, "Needs a person's approval in the page every time: the call returns at once with the approval pending, and nothing changes unless the person approves.")
	case "ask":
		parts = append(parts, "The page may ask a person to approve it: the result then says the approval is pending, and nothing changes unless the person approves.")
	default:
		parts = append(parts, "Approval "+pageQuote(c.Approval, maxIDShown)+": the page may need a person to approve it; the result says when it does.")
	}
	if c.Handoff != "" {
		parts = append(parts, "Hands over to a person; the page says: "+pageQuote(c.Handoff, maxIDShown)+".")
	}
	return strings.Join(parts, " ")
}

// Leads that tell the facade's own tools from the page's. Page text only
// ever appears after pageToolLead, quoted.
const (
	ownToolLead  = "pling-mcp's own tool (not the page's):"
	pageToolLead = "An action offered by the page"
)

// Bounds on page text in tools/list, in characters.
const (
	maxIDShown          = 200
	maxTitleShown       = 100
	maxDescriptionShown = 1000
	maxSchemaTextShown  = 500
)

// pageTitle is a page tool's title: the capability id as the page's, so
// that it never reads like a title of the facade's.
func pageTitle(id string) string {
	return pageText(id, maxTitleShown, false) + " (page action)"
}

// pageQuote is s as one quoted string of the page's words (pageText, with
// `"` and `\` escaped).
func pageQuote(s string, n int) string {
	return `"` + pageText(s, n, true) + `"`
}

// pageText makes text from the page safe to show a person or a model: tabs,
// line breaks and other spaces become " "; every other character that does
// not show as itself (controls such as BEL and ESC, bidi overrides and
// isolates, zero-width and other format characters, invisible letters,
// variation selectors, private use, unassigned code points) is written as
// \u{XXXX}, visible. At most n characters of s are kept; a cut says how many
// went. With quote, `"` and `\` are escaped too.
func pageText(s string, n int, quote bool) string {
	var b strings.Builder
	kept := 0
	for i, r := range s {
		if kept == n {
			fmt.Fprintf(&b, "… (%d more characters)", utf8.RuneCountInString(s[i:]))
			break
		}
		kept++
		switch {
		case quote && (r == '"' || r == '\\'):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t' || r == '\n' || r == '\r' || unicode.Is(unicode.Zs, r):
			b.WriteByte(' ')
		case !unicode.IsPrint(r) || invisible(r):
			fmt.Fprintf(&b, "\\u{%04X}", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// hidden reports a character that pageText would not show as itself.
func hidden(r rune) bool {
	return r == '\t' || r == '\n' || r == '\r' || unicode.Is(unicode.Zs, r) && r != ' ' || !unicode.IsPrint(r) && r != ' ' || invisible(r)
}

// longText reports a string longer than the bound on a schema's text.
func longText(s string) bool {
	return len(s) > maxSchemaTextShown && utf8.RuneCountInString(s) > maxSchemaTextShown
}

// unshowable reports a string that cannot be shown as it is: it holds a
// hidden character or is longer than maxSchemaTextShown.
func unshowable(s string) bool {
	return longText(s) || strings.ContainsFunc(s, hidden)
}

// hidesText reports a key or a string in a schema (the schema's own titles
// and descriptions aside, which cleanSchemaText rewrote) that holds a hidden
// character or is longer than maxSchemaTextShown: either would have to be
// shown otherwise than as it is, and such text is sent back exactly (a
// property name, an enum or const value, a title inside one) or means
// something cut (a pattern).
func hidesText(v any) bool { return hides(v, false) }

// hides is hidesText inside a value (instance) or a schema.
func hides(v any, instance bool) bool {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if unshowable(k) {
				return true
			}
			switch {
			case instance || instanceKeywords[k]:
				if hides(e, true) {
					return true
				}
			case nameMaps[k]:
				if names, ok := e.(map[string]any); ok {
					for n, sub := range names {
						if unshowable(n) || hides(sub, false) {
							return true
						}
					}
				} else if hides(e, false) {
					return true
				}
			default:
				if _, isText := e.(string); isText && (k == "title" || k == "description") {
					continue
				}
				if hides(e, false) {
					return true
				}
			}
		}
	case []any:
		return slices.ContainsFunc(v, func(e any) bool { return hides(e, instance) })
	case []string:
		return slices.ContainsFunc(v, unshowable)
	case string:
		return unshowable(v)
	}
	return false
}

// invisible reports printable characters that show nothing: fillers,
// joiners and selectors that unicode.IsPrint counts as marks or letters.
func invisible(r rune) bool {
	switch {
	case r == 0x034F, r == 0x115F, r == 0x1160, r == 0x17B4, r == 0x17B5, r == 0x3164, r == 0xFFA0, r == 0x2800:
		return true
	case r >= 0x180B && r <= 0x180F, r >= 0xFE00 && r <= 0xFE0F, r >= 0xE0000 && r <= 0xE0FFF:
		return true
	}
	return false
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
	dropUnshowableAnnotations(v)
	cleanSchemaText(v)
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
// transport's business and not the page's. It removes "$comment" strings
// too: JSON Schema keeps them for a schema's maintainers and says not to
// show them to users, and a model reading tools/list is one; there they
// would be the page's text in no bound and outside every framing of the
// page's words (the surface validates with its own copy).
func dropHeaderBindings(v any) {
	switch v := v.(type) {
	case map[string]any:
		delete(v, "x-mcp-header")
		if _, isText := v["$comment"].(string); isText {
			delete(v, "$comment") // a member named $comment has a schema, not a string
		}
		for _, e := range v {
			dropHeaderBindings(e)
		}
	case []any:
		for _, e := range v {
			dropHeaderBindings(e)
		}
	}
}

// nameMaps are the keywords whose value maps names to schemas: a member
// named "default" there is a property, not the annotation.
var nameMaps = map[string]bool{"properties": true, "patternProperties": true, "$defs": true, "definitions": true, "dependentSchemas": true}

// instanceKeywords hold values, not schemas: nothing in them is a keyword.
var instanceKeywords = map[string]bool{"default": true, "examples": true, "enum": true, "const": true}

// dropUnshowableAnnotations removes from a schema every "default", and
// every element of "examples", that holds a string or a member name that
// cannot be shown as it is (longer than maxSchemaTextShown, or with a
// hidden character). They are annotations: the surface validates with its
// own copy of the schema and never reads them. Rewritten, such a value
// would be another value that a model may send as it reads it; kept, it
// would put the page's text before the model in no bound, or hidden, as
// "$comment" would.
func dropUnshowableAnnotations(v any) {
	switch v := v.(type) {
	case map[string]any:
		if d, ok := v["default"]; ok && holdsUnshowable(d) {
			delete(v, "default")
		}
		if ex, ok := v["examples"].([]any); ok {
			kept := slices.DeleteFunc(ex, holdsUnshowable)
			if len(kept) == 0 {
				delete(v, "examples")
			} else {
				v["examples"] = kept
			}
		}
		for k, e := range v {
			switch {
			case instanceKeywords[k]:
			case nameMaps[k]:
				if names, ok := e.(map[string]any); ok {
					for _, s := range names {
						dropUnshowableAnnotations(s)
					}
				}
			default:
				dropUnshowableAnnotations(e)
			}
		}
	case []any:
		for _, e := range v {
			dropUnshowableAnnotations(e)
		}
	}
}

// holdsUnshowable reports a string or a member name that cannot be shown as
// it is (unshowable) anywhere in a JSON value.
func holdsUnshowable(v any) bool {
	switch v := v.(type) {
	case string:
		return unshowable(v)
	case []any:
		return slices.ContainsFunc(v, holdsUnshowable)
	case map[string]any:
		for k, e := range v {
			if unshowable(k) || holdsUnshowable(e) {
				return true
			}
		}
	}
	return false
}

// cleanSchemaText makes the page's "title" and "description" strings in a
// schema safe to show (pageText). Other strings (enum values, patterns,
// defaults) keep their meaning and stay as they are, and so does a title
// or description inside a value (enum, const, default, examples): the
// value is sent back as it is.
func cleanSchemaText(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			switch {
			case instanceKeywords[k]:
			case nameMaps[k]:
				if names, ok := e.(map[string]any); ok {
					for _, sub := range names {
						cleanSchemaText(sub)
					}
				}
			default:
				if s, ok := e.(string); ok && (k == "title" || k == "description") {
					v[k] = pageText(s, maxSchemaTextShown, false)
					continue
				}
				cleanSchemaText(e)
			}
		}
	case []any:
		for _, e := range v {
			cleanSchemaText(e)
		}
	}
}

// recordKind is the record kind a template's id names, or "record".
func recordKind(c surface.Capability) string {
	if k := templateKind(c.ID); k != "" {
		return k
	}
	return "record"
}

func recordParamDescription(c surface.Capability, ids []string) string {
	kind := pageQuote(recordKind(c), maxIDShown)
	if ids != nil {
		return fmt.Sprintf("Id of the %s record to act on.", kind)
	}
	s := fmt.Sprintf("Id of the %s record to act on; %d can be named now", kind, c.Record.Total)
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
		Title: "Page context (pling-mcp)",
		Description: ownToolLead + " read what the page shows now: its route, the ids of the records that can be named, " +
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
		Annotations: &mcp.ToolAnnotations{Title: "Page context (pling-mcp)", ReadOnlyHint: true},
	}
}
