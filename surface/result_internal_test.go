package surface

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// decodeSanitize is the decode path of sanitizeResult on its own, the
// reference plainResult's shortcut must agree with.
func decodeSanitize(raw []byte) (changed bool, err error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil || dec.More() {
		return false, errInvalid
	}
	_, changed = obj["approval"]
	for _, k := range evidenceKeys {
		if _, ok := obj[k]; ok {
			changed = true
		}
	}
	if e, ok := obj["error"]; ok && e != nil {
		changed = true
	}
	return changed, nil
}

var errInvalid = errors.New("result is not JSON")

// referenceSanitize is sanitizeResult as it was written on encoding/json;
// sanitizeResult must answer exactly the same.
func referenceSanitize(raw json.RawMessage) (json.RawMessage, bool, string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return json.RawMessage("null"), false, "", nil
	}
	if raw[0] != '{' {
		if !json.Valid(raw) {
			return nil, false, "", errInvalid
		}
		return raw, false, "", nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil || dec.More() {
		return nil, false, "", errInvalid
	}
	// The rewrite itself is shared: what this reference holds the kernel
	// to is reading the text as encoding/json reads it.
	changed, business, approval := applyConventions(obj)
	if !changed {
		return raw, false, "", nil
	}
	b, err := json.Marshal(obj)
	return b, business, approval, err
}

func checkSanitize(t *testing.T, raw []byte) {
	t.Helper()
	wb, wbus, wapp, werr := referenceSanitize(raw)
	gb, gbus, gapp, gerr := sanitizeResult(raw)
	if (werr != nil) != (gerr != nil) || !bytes.Equal(wb, gb) || wbus != gbus || wapp != gapp {
		t.Fatalf("sanitizeResult(%q) = %q %v %q %v, want %q %v %q %v", raw, gb, gbus, gapp, gerr, wb, wbus, wapp, werr)
	}
}

func TestSanitizeResultAgreesWithEncodingJSON(t *testing.T) {
	for _, raw := range []string{
		``, ` `, `null`, `1`, `"x"`, `[1,2]`, `[1,`, `tru`, `{}`, `{"a":1}`, `{"a":1}]`, `{"a":1}}`, `{"a":1} ]x`, `{"a":1} x`, `{"a":1}{}`, "{}\x00", "{} \x00",
		`{"error":"boom","approvalToken":"t"}`, `{"error":{"code":"E","message":"m","stack":"s"},"approval":{"status":"granted","by":"x"}}`,
		`{"approval":{"status":"weird"},"n":1.50,"s":"<&>\u2028","e":"\ud800"}`, "{\"error\":\"\xff\",\"x\":1}",
		`{"error":1,"error":null}`, `{"error":null,"error":"late"}`, `{"Error":"case"}`, `{"approval":1,"nested":{"b":[true,null,{"c":-0.0e-0}]}}`,
		`{"error":"x"}]`, `{"error":"x"} }`, `{"error":"x"} x`,
		`{"error":"x","deep":` + strings.Repeat(`[`, 10000) + strings.Repeat(`]`, 10000) + `}`,
		`{"error":"x","deep":` + strings.Repeat(`[`, 9998) + strings.Repeat(`]`, 9998) + `}`,
	} {
		checkSanitize(t, []byte(raw))
	}
}

func checkPlainResult(t *testing.T, raw []byte) {
	t.Helper()
	checkSanitize(t, raw)
	if len(raw) == 0 || raw[0] != '{' {
		return
	}
	if !plainResult(raw) {
		return // the decode path decides, as before
	}
	changed, err := decodeSanitize(raw)
	if err != nil || changed {
		t.Fatalf("plainResult passed %q through, but the decode path says changed=%v err=%v", raw, changed, err)
	}
	if !json.Valid(raw) {
		t.Fatalf("plainResult passed invalid JSON %q", raw)
	}
}

func TestPlainResult(t *testing.T) {
	for _, tc := range []struct {
		raw   string
		plain bool
	}{
		{`{}`, true},
		{`{"done":true,"rows":[{"error":"inner is fine"}]}`, true},
		{` { "a" : 1 , "b" : { "approval" : 2 } } `, true},
		{`{"a":1,"a":2}`, true},
		{`{"error":null}`, false},
		{`{"error":{"code":"X"}}`, false},
		{`{"approval":{"status":"granted"}}`, false},
		{`{"approvedBy":"x"}`, false},
		{`{"approvalToken":"x"}`, false},
		{`{"\u0065rror":"escaped name"}`, false},
		{`{"a":1}]`, false},
		{`{"a":1} x`, false},
		{`{"a":}`, false},
		{`{"a":1`, false},
	} {
		if got := plainResult([]byte(tc.raw)); got != tc.plain {
			t.Errorf("plainResult(%s) = %v, want %v", tc.raw, got, tc.plain)
		}
		checkPlainResult(t, []byte(tc.raw))
	}
}

func FuzzPlainResult(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"error":null}`, `{"x":{"approval":1}}`, `{"\u0061pproval":1}`, `{"a":[1,2,{"b":"<"}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { checkPlainResult(t, raw) })
}
