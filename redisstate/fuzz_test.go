package redisstate_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"
	"unicode/utf8"

	"pling.dev/agent/redisstate"
	"pling.dev/agent/surface"
)

// FuzzHandler sends arbitrary bodies: the handler never panics, answers
// 200 only to a JSON object of op and requestId in UTF-8, 400 to anything else, and never lets a body
// choose the session the limiter is asked about.
func FuzzHandler(f *testing.F) {
	for _, s := range []string{
		`{"op":"allow"}`, `{"op":"claim","requestId":"r-1"}`, `{"op":"allow","sessionId":"x"}`,
		`{"op":"claim"}`, `{"OP":"allow"}`, `{"op":"allow"} `, `[]`, `null`, ``, `{"op":"claim","requestId":"\u0000"}`,
		`{"op":"claim","requestId":"\ud83d\ude00"}`, `{"op":"claim","requestId":"\udc00"}`, "{\"op\":\"claim\",\"requestId\":\"\xff\"}",
		`{"op":"claim","requestId":"a","requestId":"b"}`, ` { "op" : "allow" } `, `{"op":"cl\u0061im","requestId":"\/"}`,
	} {
		f.Add([]byte(s))
	}
	lim := &bySession{Limiter: surface.NewSlidingWindow(1_000_000, time.Minute)}
	h, err := redisstate.Handler(redisstate.HandlerOptions{
		Session: func(*http.Request) (string, bool) { return "ses-verified", true },
		Limiter: lim, Guard: surface.NewMemoryGuard(1_000_000),
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		status, out := post(t, h, "a", string(body))
		switch status {
		case 200:
			var v map[string]any
			if err := json.Unmarshal([]byte(out), &v); err != nil || len(v) == 0 {
				t.Fatalf("200 with %q", out)
			}
			members := map[string]any{}
			if json.Unmarshal(body, &members) != nil {
				t.Fatalf("200 to a body that is not one JSON object: %q", body)
			}
			// Named exactly, and no byte encoding/json would have rewritten.
			for k := range members {
				if k != "op" && k != "requestId" {
					t.Fatalf("200 to a body with member %q: %q", k, body)
				}
			}
			if !utf8.Valid(body) {
				t.Fatalf("200 to a body that is not UTF-8: %q", body)
			}
		case 400:
			if out != `{"error":"request"}` {
				t.Fatalf("400 with %q", out)
			}
		default:
			t.Fatalf("status %d (%s) for %q", status, out, body)
		}
		for _, k := range lim.keys {
			if k != "ses-verified" && k != "\x00claim:ses-verified" {
				t.Fatalf("the limiter was asked for %q", k)
			}
		}
		lim.keys = lim.keys[:0]
	})
}
