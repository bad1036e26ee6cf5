package transcript

import (
	"bytes"
	"strings"
	"testing"
)

// TestRunFillsExpectedSections replays a small transcript whose expected
// sections are empty and checks what Run wrote into them.
func TestRunFillsExpectedSections(t *testing.T) {
	in := header + `-- page --
{"orders": 3}
-- options --
{"expose": ["update_note@order"], "session": {"agentId": "a", "sessionId": "s", "userId": "u", "expiresInMs": 1000, "scope": ["update_note@order"]}}
-- advance 250 --
-- request --
{"protocol":"pling.surface/0.1","id":"r1","method":"invoke","capability":"update_note@order","input":{"record":"SO-1002","note":"hi"}}
-- response --
-- calls --
-- audit --
-- options --
{}
-- calls --
`
	out, err := Run([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	bodies := map[int]string{}
	for i, s := range f.Sections {
		bodies[i] = string(s.Body)
	}
	want := map[int]string{
		4: `{
  "protocol": "pling.surface/0.1",
  "id": "r1",
  "ok": true,
  "result": {
    "title": "Note updated"
  },
  "after": {
    "records": [
      {
        "id": "SO-1002",
        "fields": {
          "note": "hi"
        }
      }
    ]
  }
}
`,
		5: "[\n  {\"action\":\"update_note@order:SO-1002\",\"input\":{\"note\":\"hi\"}}\n]\n",
		6: "[\n  {\"requestId\":\"r1\",\"method\":\"invoke\",\"capability\":\"update_note@order\",\"recordId\":\"SO-1002\",\"sessionId\":\"s\",\"agentId\":\"a\",\"userId\":\"u\",\"outcome\":\"ok\",\"durationMs\":0,\"time\":\"T+250ms\"}\n]\n",
		8: "[]\n", // a new scene has a new page: no calls yet
	}
	for i, w := range want {
		if bodies[i] != w {
			t.Errorf("section %d (%s):\n got %q\nwant %q", i, f.Sections[i].Name, bodies[i], w)
		}
	}
	again, err := Run([]byte(in))
	if err != nil || !bytes.Equal(again, out) {
		t.Errorf("a second Run differs (err %v):\n%s", err, again)
	}
	if round, err := Run(out); err != nil || !bytes.Equal(round, out) {
		t.Errorf("replaying Run's own output changed it (err %v)", err)
	}
}

func TestRunErrors(t *testing.T) {
	const req = "-- request --\n{}\n-- response --\n"
	tests := []struct {
		name, in, want string
	}{
		{"unknown option", "-- options --\n{\"exposed\": []}\n" + req, `unknown field "exposed"`},
		{"unknown page field", "-- page --\n{\"order\": 3}\n" + req, `unknown field "order"`},
		{"unknown session field", "-- options --\n{\"session\": {\"scopes\": []}}\n" + req, `unknown field "scopes"`},
		{"bad replay", "-- options --\n{\"replay\": {\"window\": 5}}\n" + req, "replay"},
		{"bad rate limit", "-- options --\n{\"rateLimit\": {\"maxRequests\": 0, \"windowMs\": 10}}\n" + req, "RateLimit"},
		{"remove unknown action", "-- page --\n{\"remove\": [\"orders.export\"]}\n" + req, `no action "orders.export"`},
		{"unknown handler", "-- page --\n{\"actions\": [{\"id\": \"x\", \"handler\": \"y\"}]}\n" + req, `no fixture handler "y"`},
		{"offscreen unknown record", "-- page --\n{\"orders\": 2, \"offscreen\": [\"SO-1003\"]}\n" + req, `no record "SO-1003"`},
		{"lock unknown record", "-- page --\n{\"orders\": 2}\n-- lock SO-1009 --\n", `no record "SO-1009"`},
		{"revoke in open mode", "-- revoke --\n", "open mode"},
		{"scope in open mode", "-- scope [] --\n", "open mode"},
		{"session in open mode", "-- session --\n{\"agentId\": \"a\"}\n", "open mode"},
		{"revoke without a session object", "-- options --\n{\"session\": \"missing\"}\n-- revoke --\n", "no session object"},
		{"switch to open mode", "-- options --\n{\"session\": \"missing\"}\n-- session --\nnull\n", "cannot switch to open mode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Run([]byte(header + tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Run error = %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}
