package surface_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"pling.dev/agent/surface"
	"pling.dev/agent/surface/surfacetest"
)

// Canary values standing for approval evidence. None may ever reach an
// agent's context.
var cApprovalCanaries = []string{
	"CANARY-TOKEN-7f3a",
	"CANARY-SIG-91",
	"approver alice@example.com",
	"CANARY-EVIDENCE-5c2e",
	"CANARY-TOP-TOKEN-0d1b",
	"CANARY-TOP-EVIDENCE-44",
	"CANARY-TOP-SIG-e9",
	"CANARY-TOP-BY-bob@example.com",
	"CANARY-TOP-APPROVER-carol",
}

// cEvidenceMembers is the top-level evidence a careless page might return.
const cEvidenceMembers = `"approvalToken":"CANARY-TOP-TOKEN-0d1b",` +
	`"approvalEvidence":{"doc":"CANARY-TOP-EVIDENCE-44"},` +
	`"approvalSignature":"CANARY-TOP-SIG-e9",` +
	`"approvedBy":"CANARY-TOP-BY-bob@example.com",` +
	`"approver":{"name":"CANARY-TOP-APPROVER-carol"}`

// cApprovalObject builds an approval object carrying every evidence canary.
func cApprovalObject(status string) string {
	return `{` + status + `"token":"CANARY-TOKEN-7f3a","signature":"CANARY-SIG-91",` +
		`"approvedBy":"approver alice@example.com","evidence":{"scan":"CANARY-EVIDENCE-5c2e"}}`
}

// TestApprovalReduced: whatever an executor puts in approval, the agent
// sees {"status": pending|granted|denied|unknown} and no evidence.
func TestApprovalReduced(t *testing.T) {
	tests := []struct {
		name     string
		approval string
		want     string
	}{
		{"pending", cApprovalObject(`"status":"pending",`), surface.ApprovalPending},
		{"granted", cApprovalObject(`"status":"granted",`), surface.ApprovalGranted},
		{"denied", cApprovalObject(`"status":"denied",`), surface.ApprovalDenied},
		{"status missing", cApprovalObject(``), surface.ApprovalUnknown},
		{"status of another case", cApprovalObject(`"status":"GRANTED",`), surface.ApprovalUnknown},
		{"status a synonym", cApprovalObject(`"status":"approved",`), surface.ApprovalUnknown},
		{"status empty", cApprovalObject(`"status":"",`), surface.ApprovalUnknown},
		{"status a number", cApprovalObject(`"status":1,`), surface.ApprovalUnknown},
		{"status an object", cApprovalObject(`"status":{"granted":true},`), surface.ApprovalUnknown},
		{"approval a string", `"granted"`, surface.ApprovalUnknown},
		{"approval true", `true`, surface.ApprovalUnknown},
		{"approval an array", `["granted","CANARY-TOKEN-7f3a"]`, surface.ApprovalUnknown},
		{"approval null", `null`, surface.ApprovalUnknown},
	}
	for _, tt := range tests {
		for _, evidence := range []bool{false, true} {
			name := tt.name
			if evidence {
				name += "/with top-level evidence"
			}
			t.Run(name, func(t *testing.T) {
				result := `{"title":"Order approved","approval":` + tt.approval
				if evidence {
					result += "," + cEvidenceMembers
				}
				result += `}`
				page := surfacetest.Orders(2)
				cAddAction(page, surface.Action{ID: "orders.approve", Approval: "always"}, cAnswer(result))
				f := cNewFix(t, page, surface.Options{})
				out := f.s.HandleJSON(context.Background(), cInvoke("i", "orders.approve", nil))
				for _, c := range cApprovalCanaries {
					if bytes.Contains(out, []byte(c)) {
						t.Fatalf("response carries %q: %s", c, out)
					}
				}
				var resp struct {
					OK     bool
					Result map[string]json.RawMessage
				}
				if err := json.Unmarshal(out, &resp); err != nil {
					t.Fatal(err)
				}
				if !resp.OK {
					t.Fatalf("response: %s", out)
				}
				if got, want := string(resp.Result["approval"]), `{"status":"`+tt.want+`"}`; got != want {
					t.Fatalf("approval = %s, want %s", got, want)
				}
				if got := string(resp.Result["title"]); got != `"Order approved"` {
					t.Fatalf("title = %s: other members must stay", got)
				}
				if len(resp.Result) != 2 {
					t.Fatalf("result members = %d, want title and approval only: %s", len(resp.Result), out)
				}
				// The audit says where approval stands, in the agent's words.
				if len(f.events) != 1 || f.events[0].Approval != tt.want || f.events[0].Outcome != surface.OutcomeOK {
					t.Fatalf("audit events %+v, want one ok event with approval %q", f.events, tt.want)
				}
			})
		}
	}
}

// TestApprovalEvidenceWithoutApproval: top-level evidence members go even
// when the result has no approval object.
func TestApprovalEvidenceWithoutApproval(t *testing.T) {
	page := surfacetest.Orders(2)
	cAddAction(page, surface.Action{ID: "orders.approve"}, cAnswer(`{"title":"t",`+cEvidenceMembers+`}`))
	f := cNewFix(t, page, surface.Options{})
	r := f.handle(cInvoke("i", "orders.approve", nil))
	cCheck(t, r, "")
	if got := string(r.Result.(json.RawMessage)); got != `{"title":"t"}` {
		t.Fatalf("result = %s", got)
	}
	if len(f.events) != 1 || f.events[0].Approval != "" {
		t.Fatalf("audit events %+v, want no approval status for a result without one", f.events)
	}
}

// TestApprovalAudited: a business failure that also names an approval, and
// results without one, carry exactly what the response carries; a plain
// result (the byte-for-byte path) has no approval in its audit event.
func TestApprovalAudited(t *testing.T) {
	tests := []struct {
		name, result, outcome, approval string
	}{
		{"plain", `{"title":"Note updated"}`, "ok", ""},
		{"not an object", `"done"`, "ok", ""},
		{"pending", `{"approval":{"status":"pending"}}`, "ok", "pending"},
		{"escaped member name", `{"appr\u006fval":{"status":"pending"}}`, "ok", "pending"},
		{"business failure with approval", `{"error":{"code":"LOCKED","message":"m"},"approval":{"status":"denied"}}`, "business_error", "denied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page := surfacetest.Orders(2)
			cAddAction(page, surface.Action{ID: "orders.approve", Approval: "always"}, cAnswer(tt.result))
			f := cNewFix(t, page, surface.Options{})
			out := f.s.HandleJSON(context.Background(), cInvoke("i", "orders.approve", nil))
			if len(f.events) != 1 || string(f.events[0].Outcome) != tt.outcome || f.events[0].Approval != tt.approval {
				t.Fatalf("audit events %+v, want outcome %q approval %q (response %s)", f.events, tt.outcome, tt.approval, out)
			}
			b, err := surface.AppendJSON(nil, f.events[0])
			if err != nil {
				t.Fatal(err)
			}
			if has := bytes.Contains(b, []byte(`"approval":`)); has != (tt.approval != "") {
				t.Fatalf("audit JSON %s: approval member present %v, want %v", b, has, tt.approval != "")
			}
		})
	}
}

// TestApprovalFixture: the orders page's approve@order reports pending and
// a requester; only the status survives.
func TestApprovalFixture(t *testing.T) {
	f := cNewFix(t, nil, surface.Options{})
	r := f.handle(cInvoke("i", "approve@order", map[string]any{"record": "SO-1001"}))
	cCheck(t, r, "")
	if got := cMustJSON(cResult(t, r)["approval"]); got != `{"status":"pending"}` {
		t.Fatalf("approval = %s", got)
	}
}

// TestResultPassThroughBytes: a result that needs no change reaches the
// response unchanged: key order, number spelling and escapes are the page's.
func TestResultPassThroughBytes(t *testing.T) {
	tests := []string{
		`{"title":"Done","n":1.50,"big":12345678901234567890,"nested":{"z":1,"a":[true,null]},"s":"\u00e9\n"}`,
		`{ "z" : 1 ,  "a" : { "approvalToken" : "nested members are the page's business" } }`,
		`{"error":null,"title":"no failure"}`,
		`{}`,
	}
	for _, raw := range tests {
		t.Run(raw, func(t *testing.T) {
			page := surfacetest.Orders(1)
			cAddAction(page, surface.Action{ID: "orders.custom"}, cAnswer(raw))
			f := cNewFix(t, page, surface.Options{})
			r := f.handle(cInvoke("i", "orders.custom", nil))
			cCheck(t, r, "")
			if got := string(r.Result.(json.RawMessage)); got != raw {
				t.Fatalf("result = %s, want %s byte for byte", got, raw)
			}
			var compact bytes.Buffer
			if err := json.Compact(&compact, []byte(raw)); err != nil {
				t.Fatal(err)
			}
			out := f.s.HandleJSON(context.Background(), cInvoke("j", "orders.custom", nil))
			if !bytes.Contains(out, append([]byte(`"result":`), compact.Bytes()...)) {
				t.Fatalf("encoded response %s does not carry %s", out, compact.Bytes())
			}
			if cResult(t, r)["error"] != nil {
				t.Fatal("a null error is not a business failure")
			}
		})
	}
}
