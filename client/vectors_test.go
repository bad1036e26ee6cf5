package client_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pling.dev/agent/client"
)

// replyVector is one case of the reply grammar shared by every client
// (testdata/replies/README.md says what each member means).
type replyVector struct {
	Name        string          `json:"name"`
	Method      string          `json:"method"`
	App         string          `json:"app"`
	Reply       json.RawMessage `json:"reply"`
	ReplyText   *string         `json:"replyText"`
	ReplyBase64 string          `json:"replyBase64"`
	Want        struct {
		Outcome      string `json:"outcome"`
		Reason       string `json:"reason"`
		Code         string `json:"code"`
		Message      string `json:"message"`
		Approval     string `json:"approval"`
		RetryAfterMs int64  `json:"retryAfterMs"`
		Violations   int    `json:"violations"`
	} `json:"want"`
}

// vectorRequestID is the id every vector's request carries.
const vectorRequestID = "req-1"

func loadVectors(t *testing.T) []replyVector {
	t.Helper()
	files, err := filepath.Glob("../testdata/replies/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no reply vectors: %v", err)
	}
	var all []replyVector
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var vs []replyVector
		if err := json.Unmarshal(b, &vs); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		all = append(all, vs...)
	}
	return all
}

// bytes is the reply exactly as the transport hands it over.
func (v replyVector) bytes(t *testing.T) []byte {
	switch {
	case v.ReplyText != nil:
		return []byte(*v.ReplyText)
	case v.ReplyBase64 != "":
		b, err := base64.StdEncoding.DecodeString(v.ReplyBase64)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	return v.Reply
}

// TestReplyVectors runs the shared reply grammar against this client: the
// same files run against the JavaScript client, so a reply means the same
// thing to both, and malformed is malformed in both.
func TestReplyVectors(t *testing.T) {
	reasons := map[string]error{
		"bad-reply": client.ErrBadReply, "id-mismatch": client.ErrIDMismatch,
		"protocol-mismatch": client.ErrProtocolMismatch, "app-mismatch": client.ErrAppMismatch,
	}
	seen := map[string]bool{}
	for _, v := range loadVectors(t) {
		if seen[v.Method+"/"+v.Name] {
			t.Fatalf("two vectors named %q", v.Name)
		}
		seen[v.Method+"/"+v.Name] = true
		t.Run(v.Method+"/"+v.Name, func(t *testing.T) {
			reply := v.bytes(t)
			tr := client.TransportFunc(func(context.Context, []byte) ([]byte, error) { return reply, nil })
			c := client.New(tr, client.Options{App: v.App, Retries: -1, NewID: func() string { return vectorRequestID }})
			var (
				r   *client.Result
				err error
			)
			switch v.Method {
			case "invoke":
				r, err = c.Invoke(context.Background(), "x.y", nil, client.InvokeOptions{})
			case "describe":
				_, err = c.Describe(context.Background(), client.DescribeInput{})
			default:
				t.Fatalf("method %q", v.Method)
			}
			var perr *client.ProtocolError
			var rerr *client.ReplyError
			got := "success"
			switch {
			case errors.As(err, &rerr):
				got = "malformed"
			case errors.As(err, &perr):
				got = "protocol-failure"
			case err != nil:
				t.Fatalf("error %v is neither a reply nor a protocol failure", err)
			case r != nil && r.Kind == client.BusinessFailure:
				got = "business-failure"
			}
			if got != v.Want.Outcome {
				t.Fatalf("outcome %s (%v), want %s", got, err, v.Want.Outcome)
			}
			switch got {
			case "malformed":
				if want := reasons[v.Want.Reason]; want == nil || !errors.Is(err, want) {
					t.Fatalf("reason %v, want %s", err, v.Want.Reason)
				}
				if len(err.Error()) > 400 {
					t.Fatalf("the refusal is %d bytes long: a hostile reply must not fill a log", len(err.Error()))
				}
			case "protocol-failure":
				if string(perr.Code) != v.Want.Code || perr.RetryAfter.Milliseconds() != v.Want.RetryAfterMs || len(perr.Violations) != v.Want.Violations {
					t.Fatalf("got %+v, want %+v", perr, v.Want)
				}
			}
			if r != nil {
				approval := string(r.Approval)
				if approval == "" {
					approval = "none"
				}
				if r.Code != v.Want.Code || approval != v.Want.Approval || (v.Want.Message != "" && r.Message != v.Want.Message) {
					t.Fatalf("result %+v, want %+v", r, v.Want)
				}
			}
		})
	}
}

// A transport that refused a reply for its size ends the call with that
// refusal: it is not sent again (an invoke may have run), and it is a
// reply error, never "the page did not answer".
func TestReplyTooLargeFromTransport(t *testing.T) {
	var calls int
	tr := client.TransportFunc(func(context.Context, []byte) ([]byte, error) {
		calls++
		return nil, client.ReplyTooLarge(1 << 20)
	})
	c := client.New(tr, client.Options{Backoff: func(int) time.Duration { return 0 }})
	_, err := c.Describe(context.Background(), client.DescribeInput{})
	var rerr *client.ReplyError
	if !errors.As(err, &rerr) || !errors.Is(err, client.ErrBadReply) || !strings.Contains(err.Error(), "larger than 1048576 bytes") {
		t.Fatalf("describe: %v", err)
	}
	_, err = c.Invoke(context.Background(), "x.y", nil, client.InvokeOptions{})
	if !errors.Is(err, client.ErrOutcomeUnknown) || !errors.As(err, &rerr) {
		t.Fatalf("invoke: %v", err)
	}
	if calls != 2 {
		t.Fatalf("%d round trips for two calls: a refused reply was sent again", calls)
	}
}

// The referenceability rule every client shares with the JavaScript one:
// testdata/rules/referenceable.json, which js/test/rules.test.mjs runs too.
func TestReferenceableVectors(t *testing.T) {
	b, err := os.ReadFile("../testdata/rules/referenceable.json")
	if err != nil {
		t.Fatal(err)
	}
	var vs []struct {
		Name    string          `json:"name"`
		Context json.RawMessage `json:"context"`
		ID      string          `json:"id"`
		Want    *bool           `json:"want"`
	}
	if err := json.Unmarshal(b, &vs); err != nil || len(vs) < 5 {
		t.Fatalf("%d vectors: %v", len(vs), err)
	}
	for _, v := range vs {
		t.Run(v.Name, func(t *testing.T) {
			var d client.Description
			if err := json.Unmarshal([]byte(`{"protocol":"pling.surface/0.1","capabilities":[],"context":`+string(v.Context)+`}`), &d); err != nil {
				t.Fatal(err)
			}
			offered, known := d.Referenceable(v.ID)
			switch {
			case v.Want == nil && known:
				t.Errorf("Referenceable = %v, known; want it unknown", offered)
			case v.Want != nil && (!known || offered != *v.Want):
				t.Errorf("Referenceable = %v (known %v), want %v", offered, known, *v.Want)
			}
		})
	}
}
