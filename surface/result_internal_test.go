package surface

import (
	"bytes"
	"encoding/json"
	"errors"
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

func checkPlainResult(t *testing.T, raw []byte) {
	t.Helper()
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
