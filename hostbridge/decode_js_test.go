//go:build js && wasm

package hostbridge

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"os"
	"pling.dev/agent/internal/pagejson"
	"reflect"
	"strconv"
	"strings"
	"syscall/js"
	"testing"

	"pling.dev/agent/internal/jsonread"
	"pling.dev/agent/surface"
)

// decodeExact is the reference the bridge's readers must agree with:
// encoding/json with UseNumber (and DisallowUnknownFields when strict),
// nothing after the value.
func decodeExact(data []byte, v any, strict bool) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("trailing data after JSON value")
	}
	return nil
}

// checkDecoder compares decode with decodeExact on one text: the same
// value, or both an error (with the same text when encoding/json names an
// unknown member, the one config error a page could meet). It reports
// whether the text was read.
func checkDecoder[T any](t *testing.T, text string, strict bool, decode func([]byte) (T, error)) bool {
	t.Helper()
	var want T
	werr := decodeExact([]byte(text), &want, strict)
	got, gerr := decode([]byte(text))
	switch {
	case (werr != nil) != (gerr != nil):
		t.Fatalf("%q: error %v, encoding/json error %v", text, gerr, werr)
	case werr != nil && strings.HasPrefix(werr.Error(), "json: unknown field") && werr.Error() != gerr.Error():
		t.Fatalf("%q: error %q, encoding/json error %q", text, gerr, werr)
	case werr == nil && !reflect.DeepEqual(got, want):
		t.Fatalf("%q:\n got %#v\nwant %#v", text, got, want)
	}
	return werr == nil
}

func checkConfig(t *testing.T, text string) bool {
	t.Helper()
	return checkDecoder(t, text, true, parseConfig)
}

func checkSession(t *testing.T, text string) bool {
	t.Helper()
	return checkDecoder(t, text, false, func(b []byte) (w wireSession, err error) {
		var s surface.Session
		err = decodeSession(b, &s, &w.ExpiresAt, &w.RevokedAt)
		w.AgentID, w.SessionID, w.UserID, w.Scope, w.DelegationID = s.AgentID, s.SessionID, s.UserID, s.Scope, s.DelegationID
		return w, err
	})
}

// wireSession is a session's text as encoding/json reads it, which
// decodeSession must match.
type wireSession struct {
	AgentID      string       `json:"agentId"`
	SessionID    string       `json:"sessionId"`
	UserID       string       `json:"userId"`
	ExpiresAt    *json.Number `json:"expiresAt"`
	Scope        []string     `json:"scope"`
	DelegationID string       `json:"delegationId"`
	RevokedAt    *json.Number `json:"revokedAt"`
}

func checkBools(t *testing.T, text string) bool {
	t.Helper()
	return checkDecoder(t, text, false, parseBools)
}

func checkTree(t *testing.T, text string) bool {
	t.Helper()
	return checkDecoder(t, text, false, parseTree)
}

// hostile holds texts every decoder must read exactly as encoding/json
// does, whatever their shape.
var hostile = []string{
	``, ` `, `null`, `{}`, `[]`, `true`, `1`, `"x"`, `{} x`, `{}{}`, `{`, `[`, `[true,]`, `{"a":1,}`,
	"\ufeff{}", "{\"app\":\"\xff\"}", `{"app":"a\"b"}`, `{"app":"\ud800"}`, `{"app":"\u00e9"}`,
	"{\"app\":\"a\tb\"}", `{"app":"\x"}`, `[null,true]`, `[1]`, `["true"]`, `[true] x`, `[tru]`,
}

func TestConfigDecoding(t *testing.T) {
	// The forms js/pling-surface.js writes (see buildConfig) are read
	// without encoding/json.
	for _, text := range []string{
		`{}`,
		`{"app":"o","executeTimeoutMs":30000,"expose":["orders.search_0","update_note@order"],"rateLimit":{"maxRequests":60,"windowMs":60000},"replay":{}}`,
		`{"app":"Orders – ✓","recordLimit":8,"maxRecordLimit":100,"executeTimeoutMs":1500.5,"rateLimit":{},"replay":{"windowMs":5000}}`,
		` { "hostTimeoutMs" : 1e3 , "expose" : [ ] , "rateLimit" : null , "replay" : null , "app" : null } `,
		`{"recordLimit":-0,"maxRecordLimit":-3,"executeTimeoutMs":-1,"hostTimeoutMs":1e-400}`,
	} {
		t.Run("reads "+text, func(t *testing.T) {
			if !checkConfig(t, text) {
				t.Fatalf("%s was not read", text)
			}
		})
	}
	for _, text := range append([]string{
		`{"sesion":1}`,                         // unknown: refused
		`{"replay":{"window":1}}`,              // unknown inside
		`{"App":"o"}`,                          // another case: encoding/json takes it
		`{"app":"a","APP":"b"}`,                // both spellings
		`{"app":"a","app":"b"}`,                // repeated
		`{"app":1,"app":"b"}`,                  // repeated after a type error
		`{"recordLimit":1.5}`,                  // not an int
		`{"recordLimit":1e2}`,                  // not an int either
		`{"recordLimit":"8"}`,                  // quoted
		`{"recordLimit":99999999999999999999}`, // overflow
		`{"executeTimeoutMs":1e400}`,           // out of range
		`{"executeTimeoutMs":01}`,              // leading zero
		`{"executeTimeoutMs":-}`,               // no digits
		`{"executeTimeoutMs":1.}`,              // no fraction digits
		`{"executeTimeoutMs":.5}`,              // no integer part
		`{"executeTimeoutMs":+1}`,              // plus sign
		`{"executeTimeoutMs":true}`,            // wrong type
		`{"expose":["a",null]}`,                // null element
		`{"expose":"a"}`,                       // not a list
		`{"rateLimit":[]}`,                     // not an object
		`{"rateLimit":{"maxRequests":1,"maxRequests":2}}`,
	}, hostile...) {
		t.Run(text, func(t *testing.T) { checkConfig(t, text) })
	}
}

func TestSessionDecoding(t *testing.T) {
	for _, text := range []string{
		`{"agentId":"agent.bench","sessionId":"ses_bench","userId":"u-bench","expiresAt":1767225600000,"scope":["orders.search_0","update_note@order"],"delegationId":"dlg_bench"}`,
		`{"agentId":"a","sessionId":"s","userId":"u","expiresAt":1767225600000.5,"scope":[],"revokedAt":-1e3}`,
		`{"agentId":null,"expiresAt":null,"scope":null,"revokedAt":null}`,
		`{}`,
	} {
		t.Run("reads "+text, func(t *testing.T) {
			if !checkSession(t, text) {
				t.Fatalf("%s was not read", text)
			}
		})
	}
	for _, text := range append([]string{
		`{"agentId":"a","token":"secret"}`, // unknown: ignored
		`{"AgentID":"a"}`,                  // another case
		`{"expiresAt":"1767225600000"}`,    // a quoted number is a json.Number
		`{"expiresAt":"soon"}`,             // a quoted word is not
		`{"expiresAt":1,"expiresAt":2}`,    // repeated
		`{"scope":["a",null]}`,             // null element
		`{"scope":"a"}`,                    // not a list
		`{"expiresAt":1e400}`,              // kept as text by encoding/json too
	}, hostile...) {
		t.Run(text, func(t *testing.T) { checkSession(t, text) })
	}
}

func TestExposeAnswerDecoding(t *testing.T) {
	for _, text := range []string{`[true,false,true]`, `[]`, `null`, ` [ true , null ] `} {
		t.Run("reads "+text, func(t *testing.T) {
			if !checkBools(t, text) {
				t.Fatalf("%s was not read", text)
			}
		})
	}
	for _, text := range append([]string{`[true,1]`, `{"0":true}`, `[[true]]`}, hostile...) {
		t.Run(text, func(t *testing.T) { checkBools(t, text) })
	}
}

func TestTreeDecoding(t *testing.T) {
	for _, text := range append([]string{
		`{"record":"a","offset":0}`, `{"a":{"b":[1,2,{"c":null}]},"a":2}`, `{"k":"\ud83d\ude00\ud800x"}`,
		"{\"k\xff\":1}", `[` + strings.Repeat(`[`, 9999) + strings.Repeat(`]`, 9999) + `]`,
		`[` + strings.Repeat(`[`, 10000) + strings.Repeat(`]`, 10000) + `]`,
	}, hostile...) {
		t.Run(text, func(t *testing.T) { checkTree(t, text) })
	}
}

// TestRuntimeTextsReadAsEncodingJSON creates a surface through
// js/pling-surface.js and checks that the config, session and expose
// answers it hands the bridge, and the actions of its bench page, are read
// as encoding/json reads them.
func TestRuntimeTextsReadAsEncodingJSON(t *testing.T) {
	mod := importJS(t, "../js/pling-kernel.js")
	// Imported from its text: by path, Node warns that bench/ does not
	// declare its modules' type.
	src, err := os.ReadFile("../bench/web/fixture.js")
	if err != nil {
		t.Fatal(err)
	}
	url := "data:text/javascript;base64," + base64.StdEncoding.EncodeToString(src)
	fixture := wait(t, js.Global().Call("eval", "import("+strconv.Quote(url)+")"))
	runtime := theRuntime(t)
	// A runtime that keeps the texts the bridge is handed: the config, and
	// the answers of the host's session(), expose() and actions().
	spy := js.Global().Call("eval", `(rt) => {
	  const spy = { protocol: rt.protocol, entryKey: rt.entryKey, stats: () => rt.stats(), texts: {} };
	  spy.create = (host, config) => {
	    spy.texts.config = config;
	    for (const name of ["session", "expose", "actions"]) {
	      const f = host[name];
	      host[name] = (...args) => {
	        const out = f(...args);
	        // A text answer may come as its length in the host's io buffer.
	        if (typeof out === "number") spy.texts[name] = new TextDecoder().decode(host.io.subarray(0, out));
	        if (typeof out === "string") spy.texts[name] = out;
	        return out;
	      };
	    }
	    return rt.create(host, config);
	  };
	  return spy;
	}`).Invoke(runtime)
	page := fixture.Call("makePage", 48)
	api := mod.Call("fromRuntime", spy, goOpts(t))
	opts := js.Global().Call("eval", `(api, page, session) => ({
	  registry: api.defineRegistry(page.parts), execute: page.execute, app: "o",
	  expose: (id) => id !== "orders.tag_8", session,
	  rateLimit: { maxRequests: 60, windowMs: 60000 }, replay: true, onAudit: () => {},
	})`).Invoke(api, page, fixture.Call("makeSession", page.Get("ids")))
	s := api.Call("createSurface", opts)
	t.Cleanup(func() { s.Call("close") })
	d := wait(t, s.Call("describe"))
	if n := d.Get("capabilities").Length(); n != 49 {
		t.Fatalf("describe lists %d capabilities, want the 49 exposed", n)
	}

	texts := map[string]string{}
	for _, name := range []string{"config", "session", "expose", "actions"} {
		v := spy.Get("texts").Get(name)
		if v.Type() != js.TypeString {
			t.Fatalf("the bridge was not handed %s text", name)
		}
		texts[name] = v.String()
	}
	if !checkConfig(t, texts["config"]) {
		t.Errorf("config %s was not read as encoding/json reads it", texts["config"])
	}
	if !checkSession(t, texts["session"]) {
		t.Errorf("session %s was not read as encoding/json reads it", texts["session"])
	}
	if !checkBools(t, texts["expose"]) {
		t.Errorf("expose answers %s were not read directly", texts["expose"])
	}
	if strings.Count(texts["expose"], "false") != 1 {
		t.Errorf("expose answers %s, want one false", texts["expose"])
	}
	var want []surface.Action
	if err := decodeExact([]byte(texts["actions"]), &want, false); err != nil || len(want) != 50 {
		t.Fatalf("actions text: %d actions, %v", len(want), err)
	}
	if got, err := pagejson.ParseActions([]byte(texts["actions"])); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseActions: %v\n got %#v\nwant %#v", err, got, want)
	}
}

// The readers' member lists are the json tags of the types they fill, in
// full and without a gap a keyed literal would leave as "".
func TestMemberNamesAreTheJSONTags(t *testing.T) {
	for _, c := range []struct {
		typ   any
		names []string
	}{
		{Config{}, configFields[:]}, {RateLimitConfig{}, rateLimitFields[:]}, {ReplayConfig{}, replayFields[:]},
		{wireSession{}, sessionFields[:]},
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

// parseTree decodes any JSON value into the tree encoding/json builds in
// an any with UseNumber.
func parseTree(data []byte) (any, error) {
	var v any
	err := read(data, func(r *jsonread.Reader) { v = r.Value() })
	return v, err
}
