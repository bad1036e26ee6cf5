package pagejson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"pling.dev/agent/surface"
	"reflect"
	"strings"
	"testing"

	"pling.dev/agent/internal/jsonread"
)

// referenceActions is what ParseActions must agree with: encoding/json
// with UseNumber into a []surface.Action, nothing after the value.
func referenceActions(data []byte) ([]surface.Action, error) {
	var acts []surface.Action
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&acts); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("trailing data")
	}
	return acts, nil
}

// fastActions reports whether the reader took data on its own, and what it read.
func fastActions(data []byte) ([]surface.Action, bool) {
	r := jsonread.New(data)
	var acts []surface.Action
	readActions(r, &acts)
	return acts, r.End()
}

func checkParseActions(t *testing.T, data []byte) {
	t.Helper()
	want, werr := referenceActions(data)
	got, gerr := ParseActions(data)
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("ParseActions(%q): error %v, encoding/json error %v", data, gerr, werr)
	}
	if werr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseActions(%q)\n got %#v\nwant %#v", data, got, want)
	}
	// The reader on its own must take exactly what encoding/json takes
	// (encoding/json is only asked to word an error), and read it the same.
	fa, ok := fastActions(data)
	if ok != (werr == nil) {
		t.Fatalf("reader took %q: %v; encoding/json error: %v", data, ok, werr)
	}
	if ok {
		if !reflect.DeepEqual(fa, want) {
			t.Fatalf("direct reader read %q as\n%#v\nwant %#v", data, fa, want)
		}
	}
}

// benchActions is the action list of bench/web/fixture.js (makeActions) as
// JSON.stringify writes it: 49 page-level actions and one folded template.
func benchActions(total int) string {
	verbs := []string{"search", "filter", "sort", "export", "print", "refresh", "open", "archive", "tag"}
	var b strings.Builder
	b.WriteByte('[')
	for i := 0; i < 49; i++ {
		verb := verbs[i%len(verbs)]
		effect := "read"
		if i%7 == 3 {
			effect = "write"
		}
		fmt.Fprintf(&b, `{"id":"orders.%s_%d","description":"%s%s the orders (variant %d)",`+
			`"inputSchema":{"type":"object","properties":{"query":{"type":"string","maxLength":120},"page":{"type":"integer","minimum":1}},"additionalProperties":false},`+
			`"effect":"%s","approval":"none","scopePath":["orders","toolbar"]},`,
			verb, i, strings.ToUpper(verb[:1]), verb[1:], i, effect)
	}
	fmt.Fprintf(&b, `{"id":"update_note@order","description":"Replace the note of one order",`+
		`"inputSchema":{"type":"object","properties":{"note":{"type":"string","maxLength":280}},"required":["note"],"additionalProperties":false},`+
		`"effect":"write","approval":"none","scopePath":["orders","row"],"record":{"kind":"order","total":%d}}]`, total)
	return b.String()
}

// ordersActions is surfacetest.Orders' action list as encoding/json writes it.
const ordersActions = `[{"id":"orders.search","description":"Search orders","inputSchema":{"type":"object","properties":{"query":{"type":"string"}},"additionalProperties":false},"effect":"read","approval":"none"},` +
	`{"id":"update_note@order","description":"Change an order's note","inputSchema":{"type":"object","properties":{"note":{"type":"string","maxLength":500}},"required":["note"],"additionalProperties":false},"effect":"write","approval":"ask","record":{"kind":"order","total":0}},` +
	`{"id":"approve@order","description":"Approve an order","inputSchema":{"type":"object","additionalProperties":false},"effect":"write","approval":"always","record":{"kind":"order","total":0}},` +
	`{"id":"orders.fail","effect":"write"},{"id":"orders.panic","effect":"write"},{"id":"orders.hang","effect":"write"}]`

// everyField sets every member of surface.Action and surface.RecordTemplate, with white
// space, escapes and numbers of every form inside the schema.
const everyField = ` [ { "id" : "a.b@order" , "description" : "Say \"hi\"\n\t\u00e9 \/ ✓" ,
	"inputSchema" : { "type" : "object" , "x" : [ 1 , -0.5e+3 , 2E-2 , true , false , null , "\ud83d\ude00" , "\ud800" , { } , [ ] ] } ,
	"effect" : "destructive" , "approval" : "always" , "fidelity" : "approximate" , "source" : "OrdersTable" ,
	"scopePath" : [ "orders" , "row" ] , "handoff" : "confirm" , "flowSteps" : [ ] , "offscreen" : true ,
	"record" : { "kind" : "order" , "param" : "order" , "total" : 12 , "offscreen" : -0 } } ] `

// transcriptActions returns the action lists of the pages in the kernel's
// transcripts.
func transcriptActions(t *testing.T) [][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "surface", "testdata", "transcripts", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	var out [][]byte
	for _, name := range files {
		text, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, part := range strings.Split(string(text), "\n-- page --\n")[1:] {
			var page struct{ Actions json.RawMessage }
			if err := json.NewDecoder(strings.NewReader(part)).Decode(&page); err != nil {
				t.Fatalf("%s: page: %v", name, err)
			}
			if page.Actions != nil {
				out = append(out, page.Actions)
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no page in the transcripts lists actions")
	}
	return out
}

func TestParseActionsTakesTheUsualForm(t *testing.T) {
	cases := map[string]string{
		"bench fixture":    benchActions(48),
		"surfacetest":      ordersActions,
		"every field":      everyField,
		"empty":            `[]`,
		"null":             `null`,
		"nulls leave zero": `[{"id":null,"inputSchema":null,"scopePath":null,"offscreen":null,"record":null},{"record":{"kind":null,"total":null}}]`,
		"unknown members":  `[{"id":"a","label":"A","handler":{"k":[1,{"x":"y"}]},"n":1e5}]`,
		"empty template":   `[{"id":"a","record":{}}]`,
		"schema forms":     `[{"id":"a","inputSchema":true},{"id":"b","inputSchema":"x"},{"id":"c","inputSchema":[]},{"id":"d","inputSchema":-1.5}]`,
	}
	for i, text := range transcriptActions(t) {
		cases[fmt.Sprintf("transcript page %d", i)] = string(text)
	}
	for name, text := range cases {
		t.Run(name, func(t *testing.T) {
			if _, ok := fastActions([]byte(text)); !ok {
				t.Errorf("direct reader did not take %s", text)
			}
			checkParseActions(t, []byte(text))
		})
	}
}

func TestParseActionsReadsTheFixture(t *testing.T) {
	acts, err := ParseActions([]byte(benchActions(48)))
	if err != nil {
		t.Fatal(err)
	}
	if len(acts) != 50 {
		t.Fatalf("%d actions, want 50", len(acts))
	}
	last := acts[49]
	if last.ID != "update_note@order" || last.Record == nil || last.Record.Kind != "order" || last.Record.Total != 48 ||
		!reflect.DeepEqual(last.ScopePath, []string{"orders", "row"}) ||
		string(last.InputSchema) != `{"type":"object","properties":{"note":{"type":"string","maxLength":280}},"required":["note"],"additionalProperties":false}` {
		t.Fatalf("template read as %#v", last)
	}
	if acts[3].Effect != "write" || acts[3].Record != nil || acts[0].Description != "Search the orders (variant 0)" {
		t.Fatalf("page actions read as %#v, %#v", acts[0], acts[3])
	}
	// A null list is nil, an empty one is not: the host tells them apart.
	if acts, err := ParseActions([]byte(" null ")); err != nil || acts != nil {
		t.Fatalf("null: %#v, %v", acts, err)
	}
	if acts, err := ParseActions([]byte("[]")); err != nil || acts == nil || len(acts) != 0 {
		t.Fatalf("[]: %#v, %v", acts, err)
	}
}

func TestParseActionsLeavesTheRestToEncodingJSON(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 300) + `1` + strings.Repeat(`}`, 300)
	for name, text := range map[string]string{
		"case-insensitive member":    `[{"ID":"a"}]`,
		"both spellings":             `[{"id":"a","Id":"b"}]`,
		"repeated member":            `[{"id":"a","id":"b"}]`,
		"repeated schema":            `[{"id":"a","inputSchema":{},"inputSchema":{"type":"object"}}]`,
		"repeated template member":   `[{"record":{"total":1,"total":2}}]`,
		"kelvin sign folds to k":     `[{"record":{"\u212aind":"order"}}]`,
		"long s folds to s":          `[{"ſource":"x"}]`,
		"lone surrogate":             `[{"id":"\ud800"}]`,
		"lone surrogate in key":      `[{"\udc00":1}]`,
		"escaped pair":               `[{"id":"\ud83d\ude00"}]`,
		"null element":               `[null]`,
		"null scope element":         `[{"scopePath":["a",null]}]`,
		"wrong type id":              `[{"id":1}]`,
		"wrong type effect":          `[{"id":"a","effect":true}]`,
		"wrong type offscreen":       `[{"offscreen":"yes"}]`,
		"wrong type scopePath":       `[{"scopePath":"orders"}]`,
		"wrong type record":          `[{"record":[]}]`,
		"wrong type list":            `{"id":"a"}`,
		"number element":             `[1]`,
		"total not an int":           `[{"record":{"total":1.0}}]`,
		"total exponent":             `[{"record":{"total":1e2}}]`,
		"total overflows":            `[{"record":{"total":99999999999999999999}}]`,
		"total as string":            `[{"record":{"total":"3"}}]`,
		"trailing data":              `[] x`,
		"two values":                 `[] []`,
		"truncated":                  `[{"id":"a"`,
		"truncated schema":           `[{"inputSchema":{"a":[1,2}}]`,
		"bad number in schema":       `[{"inputSchema":{"a":01}}]`,
		"bad escape in schema":       `[{"inputSchema":{"a":"\x"}}]`,
		"short unicode escape":       `[{"inputSchema":"\u12"}]`,
		"control character":          "[{\"id\":\"a\tb\"}]",
		"control in schema":          "[{\"inputSchema\":\"a\nb\"}]",
		"nul escape":                 `[{"id":"a\u0000b"}]`,
		"trailing comma":             `[{"id":"a"},]`,
		"trailing comma in object":   `[{"id":"a",}]`,
		"empty":                      ``,
		"space only":                 `  `,
		"invalid UTF-8":              "[{\"id\":\"\xff\"}]",
		"invalid UTF-8 in schema":    "[{\"inputSchema\":\"\xff\"}]",
		"byte order mark":            "\ufeff[]",
		"deep schema":                `[{"inputSchema":` + deep + `}]`,
		"deep unknown member":        `[{"x":` + deep + `}]`,
		"too deep for encoding/json": `[{"inputSchema":` + strings.Repeat(`[`, 10001) + strings.Repeat(`]`, 10001) + `}]`,
		"literal prefix":             `[{"offscreen":tru}]`,
		"literal in schema":          `[{"inputSchema":nul}]`,
		"number then letter":         `[{"inputSchema":1x}]`,
		"lone minus":                 `[{"inputSchema":-}]`,
	} {
		t.Run(name, func(t *testing.T) { checkParseActions(t, []byte(text)) })
	}
}

func FuzzParseActions(f *testing.F) {
	f.Add([]byte(benchActions(3)))
	f.Add([]byte(ordersActions))
	f.Add([]byte(everyField))
	f.Add([]byte(`[{"ID":"a","record":{"Total":1}},null,{"scopePath":[null]}]`))
	f.Add([]byte(`[{"id":"a","id":"b","inputSchema":{"a":"\ud800"}}]`))
	f.Fuzz(func(t *testing.T, data []byte) { checkParseActions(t, data) })
}

func BenchmarkParseActions(b *testing.B) {
	data := []byte(benchActions(48))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseActions(data); err != nil {
			b.Fatal(err)
		}
	}
}

// The reference point: encoding/json on the same text.
func BenchmarkParseActionsEncodingJSON(b *testing.B) {
	data := []byte(benchActions(48))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := referenceActions(data); err != nil {
			b.Fatal(err)
		}
	}
}
