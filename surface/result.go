package surface

import (
	"bytes"
	"encoding/json"
	"errors"
	"sync"

	"pling.dev/agent/internal/jsonread"
	"pling.dev/agent/internal/jsonwrite"
)

// Approval statuses a result may report. The agent learns where approval
// stands, never who approved or with what.
const (
	approvalPending = "pending"
	approvalGranted = "granted"
	approvalDenied  = "denied"
	// approvalUnknown replaces a status the kernel does not know, so a
	// client can never read an unknown status as a grant.
	approvalUnknown = "unknown"
)

// evidenceKeys are top-level result members that would carry approval
// evidence. The convention is that approval is reported only through
// result.approval.status; these are removed in case a page puts them
// elsewhere.
var evidenceKeys = []string{"approvalToken", "approvalEvidence", "approvalSignature", "approvedBy", "approver"}

// sanitizeResult applies the result conventions to an executor's answer:
//   - approval is reduced to {"status": pending|granted|denied|unknown};
//   - error is reduced to {"code", "message"} strings (a business failure);
//   - approval evidence members are dropped.
//
// It reports whether the result is a business failure, and the approval
// status the result now carries ("" when it has none). Results that need no
// change are passed through byte for byte.
func sanitizeResult(raw json.RawMessage) (json.RawMessage, bool, string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return json.RawMessage("null"), false, "", nil
	}
	if raw[0] != '{' {
		if !jsonread.Valid(raw) {
			return nil, false, "", errors.New("result is not JSON")
		}
		return raw, false, "", nil
	}
	if plainResult(raw) {
		return raw, false, "", nil
	}
	// Read as encoding/json's Decoder reads one value into a map with
	// UseNumber, then More: what follows the object may be white space, or
	// a stray ] or }, which More does not count as another value.
	r := jsonread.New(raw)
	obj, _ := r.Value().(map[string]any)
	if r.Err {
		return nil, false, "", errors.New("result is not JSON")
	}
	if r.Space(); r.Pos < len(r.Data) && r.Data[r.Pos] != ']' && r.Data[r.Pos] != '}' {
		return nil, false, "", errors.New("result is not JSON")
	}
	changed, business, approval := applyConventions(obj)
	if !changed {
		return raw, false, "", nil
	}
	b, err := AppendJSON(nil, obj)
	return b, business, approval, err
}

// applyConventions rewrites a decoded result object in place and reports
// whether it changed, whether it is a business failure, and the approval
// status it now carries.
func applyConventions(obj map[string]any) (changed, business bool, approval string) {
	if a, ok := obj["approval"]; ok {
		approval = approvalStatus(a)
		obj["approval"] = map[string]any{"status": approval}
		changed = true
	}
	for _, k := range evidenceKeys {
		if _, ok := obj[k]; ok {
			delete(obj, k)
			changed = true
		}
	}
	if e, ok := obj["error"]; ok && e != nil {
		business = true
		obj["error"] = businessError(e)
		changed = true
	}
	return changed, business, approval
}

// plainResult reports whether raw is one well-formed JSON object with none
// of the top-level members the conventions rewrite, which most results are;
// it proves that in one scan instead of a decode. A member name written
// with escapes counts as a rewritten one: the decode path reads it.
func plainResult(raw []byte) bool {
	// The compact text is not kept: the scan writes into a pooled buffer.
	buf := compactScratch.Get().(*[]byte)
	out, ok, rewritten := jsonwrite.CompactTop((*buf)[:0], raw, rewrittenKey)
	if cap(out) <= 64<<10 {
		*buf = out[:0]
	}
	compactScratch.Put(buf)
	return ok && !rewritten
}

var compactScratch = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// rewrittenKey reports whether a top-level member name, as written between
// its quotes, is one the conventions rewrite. A name written with escapes
// counts as one: the decode path reads it.
func rewrittenKey(key []byte) bool {
	if bytes.IndexByte(key, '\\') >= 0 || string(key) == "approval" || string(key) == "error" {
		return true
	}
	for _, k := range evidenceKeys {
		if string(key) == k {
			return true
		}
	}
	return false
}

func approvalStatus(a any) string {
	m, ok := a.(map[string]any)
	if !ok {
		return approvalUnknown
	}
	switch st, _ := m["status"].(string); st {
	case approvalPending, approvalGranted, approvalDenied:
		return st
	}
	return approvalUnknown
}

// businessError keeps the code and message of a business failure and
// nothing else: a stack, a request dump or a token has no place in an
// agent's context.
func businessError(e any) map[string]any {
	out := map[string]any{"code": "ACTION_FAILED", "message": ""}
	switch t := e.(type) {
	case map[string]any:
		if c, ok := t["code"].(string); ok && c != "" {
			out["code"] = c
		}
		if m, ok := t["message"].(string); ok {
			out["message"] = m
		}
	case string:
		out["message"] = t
	}
	return out
}
