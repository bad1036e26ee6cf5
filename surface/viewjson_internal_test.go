package surface

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// referenceView is what ParseView must agree with: encoding/json with
// UseNumber, nothing after the value.
func referenceView(data []byte) (*View, error) {
	v := new(View)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("trailing data")
	}
	return v, nil
}

// fastView reports whether the direct reader took data, and what it read.
func fastView(data []byte) (*View, bool) {
	if !utf8.Valid(data) {
		return nil, false // ParseView checks this before reading
	}
	p := viewParser{data: string(data)}
	v := new(View)
	p.space()
	p.view(v)
	p.space()
	return v, !p.bad && p.pos == len(data)
}

func checkParseView(t *testing.T, data []byte) {
	t.Helper()
	want, werr := referenceView(data)
	got, gerr := ParseView(data)
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("ParseView(%q): error %v, encoding/json error %v", data, gerr, werr)
	}
	if werr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseView(%q)\n got %#v\nwant %#v", data, got, want)
	}
	// The direct reader on its own must never take input encoding/json
	// refuses or reads differently.
	if fv, ok := fastView(data); ok {
		if werr != nil {
			t.Fatalf("direct reader took %q, which encoding/json refuses: %v", data, werr)
		}
		if !reflect.DeepEqual(fv, want) {
			t.Fatalf("direct reader read %q as\n%#v\nwant %#v", data, fv, want)
		}
	}
}

const typicalView = `{"route":"/orders","regions":[{"id":"orders","label":"Orders","description":"All orders"}],` +
	`"state":{"filter":"all","page":1,"sel":["SO-1"],"deep":{"a":[1.5,-2e3,true,null,{}]}},` +
	`"feedback":[{"level":"warning","message":"SO-3 is \"locked\"\n","record":"SO-3"}],"unavailable":[{"id":"x","reason":"no"}],` +
	`"records":[{"id":"SO-1","kind":"order","fields":{"customer":"Ada","note":"","total":12.50,"tags":[]},"offscreen":true,` +
	`"actions":{"update_note@order":"update_note@order:SO-1"}},{"id":"SO-2","kind":"order","fields":{"note":"é ✓ \u00e9 \/"}}],` +
	`"recordIds":["SO-1","SO-2"],"recordIdsTotal":2,"recordsTotal":2}`

func TestParseViewTakesTheUsualForm(t *testing.T) {
	for _, text := range []string{
		typicalView,
		`{}`,
		` { "route" : "/" , "records" : [ ] , "state" : { } } `,
		`{"records":[{"id":"a","fields":{}}],"regions":[],"feedback":[],"unavailable":[],"recordIds":[]}`,
		`{"route":null,"records":null,"state":null,"recordIdsTotal":null,"unknown":{"x":[1,2,{"y":null}]}}`,
		`{"records":[{"id":"a","offscreen":false,"actions":{}}],"recordsTotal":-0}`,
	} {
		if _, ok := fastView([]byte(text)); !ok {
			t.Errorf("direct reader did not take %s", text)
		}
		checkParseView(t, []byte(text))
	}
}

func TestParseViewLeavesTheRestToEncodingJSON(t *testing.T) {
	for _, text := range []string{
		`{"Route":"/a"}`,                        // case-insensitive match
		`{"route":"/a","ROUTE":"/b"}`,           // both, last wins
		`{"route":"/a","route":"/b"}`,           // repeated member
		`{"route":"\ud800"}`,                    // lone surrogate: U+FFFD
		`{"state":{"k":"\ud83d\ude00"}}`,        // escaped pair
		`{"recordsTotal":1.0}`,                  // not an int
		`{"recordsTotal":1e2}`,                  // not an int
		`{"recordsTotal":99999999999999999999}`, // overflow
		`{"recordIds":["a",null]}`,              // null element
		`{"records":[null]}`,                    // null struct
		`{"records":[{"actions":{"t":null}}]}`,  // null in map[string]string
		`{"records":[{"offscreen":"yes"}]}`,     // wrong type
		`{"actions":[{"id":"a"}]}`,              // actions are read by encoding/json
		`{"route":"/a"} x`,                      // trailing data
		`{"route":"/a"`,                         // truncated
		`null`, `[]`, `"x"`, ``, `{"route":"a\u0000b"}`, `{"route":"tab	in string"}`,
		"{\"route\":\"\xff\"}", // invalid UTF-8
		`{"state":` + strings.Repeat(`[`, 300) + strings.Repeat(`]`, 300) + `}`, // deep
	} {
		checkParseView(t, []byte(text))
	}
}

func FuzzParseView(f *testing.F) {
	f.Add([]byte(typicalView))
	f.Add([]byte(`{"Route":"/a","records":[{"ID":"x"}]}`))
	f.Add([]byte(`{"state":{"a":1,"a":2},"recordsTotal":3}`))
	f.Fuzz(func(t *testing.T, data []byte) { checkParseView(t, data) })
}
