package redisstate_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"pling.dev/agent/redisstate"
	"pling.dev/agent/surface"
)

// FuzzHandler sends arbitrary bodies: the handler never panics, answers
// 200 only to a JSON object, 400 to anything else, and never lets a body
// choose the session the limiter is asked about.
func FuzzHandler(f *testing.F) {
	for _, s := range []string{
		`{"op":"allow"}`, `{"op":"claim","requestId":"r-1"}`, `{"op":"allow","sessionId":"x"}`,
		`{"op":"claim"}`, `{"OP":"allow"}`, `{"op":"allow"} `, `[]`, `null`, ``, `{"op":"claim","requestId":"\u0000"}`,
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
			if json.Unmarshal(body, &map[string]any{}) != nil {
				t.Fatalf("200 to a body that is not one JSON object: %q", body)
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
