package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"pling.dev/agent/surface"
	"pling.dev/agent/surface/surfacetest"
)

const fuzzID = "req_02"

// fuzzSeeds are the specification's response examples, replies of the real
// kernel, and hostile variations of them.
func fuzzSeeds(t testing.TB) []string {
	seeds := []string{
		// 03: describe success, invoke business failure, success with after,
		// protocol failure.
		`{"protocol":"pling.surface/0.1","id":"req_02","ok":true,"result":{"app":"orders","capabilities":[],"context":{"regions":[],"records":[],"recordIds":[],"recordIdsTotal":0,"state":{},"feedback":[],"unavailable":[],"recordsTotal":0,"feedbackTotal":0,"unavailableTotal":0}}}`,
		`{"protocol":"pling.surface/0.1","id":"req_02","ok":true,"result":{"error":{"code":"ACTION_UNAVAILABLE","message":"记录已锁定"}}}`,
		`{"protocol":"pling.surface/0.1","id":"req_02","ok":true,"result":{"title":"备注已更新"},"after":{"records":[{"id":"SO-1002","fields":{"note":"周五前回电"}}],"state":{"filter":"all"}}}`,
		`{"protocol":"pling.surface/0.1","id":"req_02","ok":false,"error":{"code":"CAPABILITY_NOT_EXPOSED","message":"能力不在当前暴露范围内"}}`,
		// Variations.
		`{"protocol":"pling.surface/0.1","id":"req_02","ok":true,"result":{"approval":{"status":"pending"}}}`,
		`{"protocol":"pling.surface/0.1","id":"req_02","ok":true,"result":{"approval":{"status":"approved"}}}`,
		`{"protocol":"pling.surface/0.1","id":"req_02","ok":true,"result":{"approval":{"status":"granted"},"approval":{"status":"denied"}}}`,
		`{"protocol":"pling.surface/0.1","id":"req_02","ok":true,"OK":false,"result":{}}`,
		`{"protocol":"pling.surface/0.1","id":"req_02","ok":"true","result":{}}`,
		`{"protocol":"pling.surface/0.1","id":"req_02","result":{}}`,
		`{"protocol":"pling.surface/0.1","id":"req_03","ok":true,"result":{}}`,
		`{"protocol":"pling.surface/0.1","id":"","ok":false,"error":{"code":"INVALID_REQUEST","retryAfterMs":1e3}}`,
		`{"protocol":"pling.surface/0.2","id":"req_02","ok":true,"result":{}}`,
		`{"channel":"pling.surface","kind":"response","app":"orders","envelope":{"protocol":"pling.surface/0.1","id":"req_02","ok":true,"result":{"error":null}}}`,
		`{"protocol":"pling.surface/0.1","id":"req_02","ok":true,"result":{"capabilities":[{"id":"a","record":{"param":"record","total":1}}],"capabilitiesUnchanged":true,"context":{}}}`,
		``, `null`, `[]`, `{}`, `"ok"`, `{"ok":true}`, "\xff", `{"a":1}{"b":2}`,
		strings.Repeat(`{"a":`, 200) + `1` + strings.Repeat(`}`, 200),
	}
	// The kernel's own replies to a few requests.
	page := surfacetest.Orders(3)
	s, err := surface.New(surface.Options{Registry: page.View, Execute: page.Execute, Now: surfacetest.NewClock().Now, App: "orders",
		RateLimit: &surface.RateLimitOptions{MaxRequests: 6, Window: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range []string{
		`{"protocol":"pling.surface/0.1","id":"req_02","method":"describe","input":{"limit":2}}`,
		`{"protocol":"pling.surface/0.1","id":"req_02","method":"invoke","capability":"update_note@order","input":{"record":"SO-1002","note":"x"}}`,
		`{"protocol":"pling.surface/0.1","id":"req_02","method":"invoke","capability":"update_note@order","input":{"record":"SO-1003","note":"x"}}`,
		`{"protocol":"pling.surface/0.1","id":"req_02","method":"invoke","capability":"approve@order","input":{"record":"SO-1001"}}`,
		`{"protocol":"pling.surface/0.1","id":"req_02","method":"invoke","capability":"update_note@order","input":{"record":"SO-1002","note":5}}`,
		`{"protocol":"pling.surface/0.1","id":"req_02","method":"invoke","capability":"orders.search"}`,
		`{"protocol":"pling.surface/0.1","id":"req_02","method":"invoke","capability":"orders.search"}`,
	} {
		seeds = append(seeds, string(s.HandleJSON(context.Background(), []byte(req))))
	}
	return seeds
}

// FuzzParseResponse feeds arbitrary bytes to the reply parser as the
// answer to an invoke and to a describe. It must never panic, must return
// exactly one of a reply and a *ReplyError, and must classify a reply as a
// success only when an independent reading of the same bytes agrees.
func FuzzParseResponse(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, m := range []method{methodInvoke, methodDescribe} {
			want := expect{id: fuzzID, method: m, max: DefaultMaxReplyBytes}
			env, err := parseEnvelope(data, want)
			if (env == nil) == (err == nil) {
				t.Fatalf("env %v and err %v", env, err)
			}
			if err != nil {
				var rerr *ReplyError
				if !errors.As(err, &rerr) {
					t.Fatalf("error %v is not a *ReplyError", err)
				}
				continue
			}
			top := oracleEnvelope(t, data)
			if env.perr != nil {
				if top["ok"] != false || env.perr.Code == "" {
					t.Fatalf("protocol failure read from %q", data)
				}
				continue
			}
			if top["ok"] != true || top["protocol"] != surface.Protocol || top["id"] != fuzzID {
				t.Fatalf("success read from %q", data)
			}
			if _, hasErr := top["error"]; hasErr && top["error"] != nil {
				t.Fatalf("success with an error member: %q", data)
			}
			if m == methodDescribe {
				d, err := parseDescription(env.result, want, false)
				if err != nil {
					continue
				}
				res, _ := top["result"].(map[string]any)
				if _, ok := res["capabilities"].([]any); !ok || d == nil {
					t.Fatalf("description read without a capability list: %q", data)
				}
				continue
			}
			r, err := invokeResult(env)
			if err != nil {
				continue
			}
			res, isObj := top["result"].(map[string]any)
			switch r.Kind {
			case Success:
				if isObj && res["error"] != nil {
					t.Fatalf("success read from a result with an error: %q", data)
				}
			case BusinessFailure:
				e, _ := res["error"].(map[string]any)
				if code, _ := e["code"].(string); code == "" || code != r.Code {
					t.Fatalf("business failure %q read from %q", r.Code, data)
				}
			default:
				t.Fatalf("kind %q", r.Kind)
			}
			if r.Approval != ApprovalNone {
				a, _ := res["approval"].(map[string]any)
				if st, _ := a["status"].(string); st != string(r.Approval) {
					t.Fatalf("approval %q read from %q", r.Approval, data)
				}
			} else if _, has := res["approval"]; isObj && has {
				t.Fatalf("approval member ignored in %q", data)
			}
			if r.Completed() && r.Approval != ApprovalNone && r.Approval != ApprovalGranted {
				t.Fatalf("completed with approval %q", r.Approval)
			}
		}
	})
}

// oracleEnvelope reads a reply the parser accepted with encoding/json
// alone (exact keys through a map), unwrapping a window message.
func oracleEnvelope(t *testing.T, data []byte) map[string]any {
	t.Helper()
	var top map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&top); err != nil || top == nil {
		t.Fatalf("accepted %q, which encoding/json cannot read as an object: %v", data, err)
	}
	if env, ok := top["envelope"]; ok {
		if top, ok = env.(map[string]any); !ok {
			t.Fatalf("accepted a wrapper without an envelope object: %q", data)
		}
	}
	return top
}

func TestFuzzSeedsParse(t *testing.T) {
	// The kernel's replies to a describe and to the invokes above must all
	// be readable: the parser is no stricter than the kernel it talks to.
	seeds := fuzzSeeds(t)
	kernel := seeds[len(seeds)-7:]
	for i, s := range kernel {
		m := methodInvoke
		if i == 0 {
			m = methodDescribe
		}
		env, err := parseEnvelope([]byte(s), expect{id: fuzzID, method: m})
		if err != nil {
			t.Fatalf("kernel reply %s: %v", s, err)
		}
		if env.perr != nil {
			continue
		}
		if m == methodDescribe {
			_, err = parseDescription(env.result, expect{}, false)
		} else {
			_, err = invokeResult(env)
		}
		if err != nil {
			t.Fatalf("kernel reply %s: %v", s, err)
		}
	}
}
