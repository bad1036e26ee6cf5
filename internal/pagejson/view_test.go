package pagejson

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"pling.dev/agent/surface"
	"reflect"
	"strings"
	"testing"

	"pling.dev/agent/internal/jsonread"
)

// referenceView is what ParseView must agree with: encoding/json with
// UseNumber, nothing after the value.
func referenceView(data []byte) (*surface.View, error) {
	v := new(surface.View)
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

// fastView reports whether the reader took data on its own, and what it read.
func fastView(data []byte) (*surface.View, bool) {
	r := jsonread.New(data)
	v := new(surface.View)
	readView(r, v)
	return v, r.End()
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
	// The reader on its own must take exactly what encoding/json takes
	// (encoding/json is only asked to word an error), and read it the same.
	fv, ok := fastView(data)
	if ok != (werr == nil) {
		t.Fatalf("reader took %q: %v; encoding/json error: %v", data, ok, werr)
	}
	if ok {
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

func TestParseViewReadsWhatEncodingJSONReads(t *testing.T) {
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
		// A repeated member decodes into what the earlier one left: list
		// elements and maps merge, within the slice's capacity too.
		`{"regions":[{"id":"a","label":"L"}],"regions":[{"id":"b"}]}`,
		`{"regions":[{"id":"a"},{"id":"b","label":"B"}],"regions":[{"id":"c"}],"regions":[{"id":"x"},{"id":"y"}]}`,
		`{"records":[{"id":"a","fields":{"x":1},"actions":{"p":"q"}}],"RECORDS":[{"fields":{"y":2},"actions":{"r":null}}]}`,
		`{"state":{"a":1},"state":{"b":2}}`, `{"state":{"a":1},"state":null}`, `{"recordIds":["x","y"],"recordIds":[null]}`,
		`{"recordIds":["x"],"recordIds":[]}`, `{"regions":[{"id":"a"}],"regions":null}`,
		`{"actions":[{"id":"a","record":{"kind":"k","total":3}},{"id":"b"}],"actions":[{"record":{"param":"p"}}]}`,
		`{"records":[{"ID":"a","Id":"b","iD":"c"}]}`, `{"ſtate":{"k":1}}`, `{"\u0072oute":"/esc"}`, // folded and escaped names
		`{"route":"\ud800\u0041"}`, `{"route":"\udc00\ud800"}`, `{"route":"\ud83d\ude00\ud83d"}`, `{"route":"\ud800\"}`,
		"{\"ro\xffute\":1}", "{\"route\":\"a\xc3\"}", "{\"route\":\"\xed\xa0\x80\"}",
		`{"recordsTotal":"1"}`, `{"recordsTotal":-9223372036854775808}`, `{"recordsTotal":9223372036854775808}`,
		`{"records":[{"offscreen":null,"fields":null,"actions":null}]}`, `{"records":[{"actions":{"a":1}}]}`,
		`{"route":"/a"}]`, `{"route":"/a"} {}`, " {\"route\":1}", `{"route":"\x"}`, `{"route":"\u12"}`, `{"route":"\u12G4"}`,
		`{"state":{"n":01}}`, `{"state":{"n":-}}`, `{"state":{"n":1.}}`, `{"state":{"n":1e}}`, `{"state":{"n":.5}}`, `{"state":{"n":1e+5}}`,
		`{"state":{"t":tru}}`, `{"state":{"t":nul}}`, `{"state":{"a":[1,]}}`, `{"state":{"a":{"b":1,}}}`, `{"state":{,}}`,
		"\ufeff{}", // a byte order mark is not white space
		`{"state":` + strings.Repeat(`[`, 9999) + strings.Repeat(`]`, 9999) + `}`,   // 10000 levels: read
		`{"state":` + strings.Repeat(`[`, 10000) + strings.Repeat(`]`, 10000) + `}`, // 10001: refused
		`{"unknown":` + strings.Repeat(`{"a":`, 10000) + `1` + strings.Repeat(`}`, 10000) + `}`,
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

// The readers' member lists are the json tags of the types they fill, in
// full and without a gap a keyed literal would leave as "": a field added
// to a type without a member that reads it fails here, not on a page.
func TestMemberNamesAreTheJSONTags(t *testing.T) {
	for _, c := range []struct {
		typ   any
		names []string
	}{
		{surface.Action{}, actionFields[:]}, {surface.RecordTemplate{}, templateFields[:]}, {surface.View{}, viewFields[:]},
		{surface.Region{}, regionFields[:]}, {surface.Record{}, recordViewFields[:]}, {surface.Feedback{}, feedbackFields[:]},
		{surface.Unavailable{}, unavailableFields[:]},
	} {
		typ := reflect.TypeOf(c.typ)
		var tags []string
		for i := range typ.NumField() {
			if name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
				tags = append(tags, name)
			}
		}
		if strings.Join(tags, ",") != strings.Join(c.names, ",") {
			t.Errorf("%s: json tags %q, reader's members %q", typ.Name(), tags, c.names)
		}
	}
}
