package client_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"pling.dev/agent/client"
)

// TestInvokeReplies classifies hand-written replies to an invoke, the
// malformed ones above all. "$ID" stands for the request's id.
func TestInvokeReplies(t *testing.T) {
	const p = `"protocol":"pling.surface/0.1"`
	tests := []struct {
		name  string
		reply string
		app   string
		want  string // outcome; "unknown:reply" carries a *ReplyError
		is    error  // the reply error's reason, when one
		check func(t *testing.T, r *client.Result)
	}{
		// Well-formed.
		{name: "spec success with after", reply: `{` + p + `,"id":"$ID","ok":true,"result":{"title":"备注已更新"},"after":{"records":[{"id":"SO-1002","fields":{"note":"周五前回电"}}],"state":{"filter":"all"}}}`, want: "success",
			check: func(t *testing.T, r *client.Result) {
				if r.After == nil || r.After.Records[0].Fields["note"] != "周五前回电" || r.After.State["filter"] != "all" {
					t.Fatalf("after %+v", r.After)
				}
			}},
		{name: "spec business failure", reply: `{` + p + `,"id":"$ID","ok":true,"result":{"error":{"code":"ACTION_UNAVAILABLE","message":"记录已锁定"}}}`, want: "business:ACTION_UNAVAILABLE",
			check: func(t *testing.T, r *client.Result) {
				if r.Message != "记录已锁定" {
					t.Fatalf("message %q", r.Message)
				}
			}},
		{name: "spec protocol failure", reply: `{` + p + `,"id":"$ID","ok":false,"error":{"code":"CAPABILITY_NOT_EXPOSED","message":"能力不在当前暴露范围内"}}`, want: "protocol:CAPABILITY_NOT_EXPOSED"},
		{name: "protocol failure with the empty id", reply: `{` + p + `,"id":"","ok":false,"error":{"code":"INVALID_REQUEST","message":"x"}}`, want: "protocol:INVALID_REQUEST"},
		{name: "a code from a later version is still a failure", reply: `{` + p + `,"id":"$ID","ok":false,"error":{"code":"SOMETHING_NEW"}}`, want: "protocol:SOMETHING_NEW"},
		{name: "retryAfterMs written as 1.0e3", reply: `{` + p + `,"id":"$ID","ok":false,"error":{"code":"RATE_LIMITED","message":"","retryAfterMs":1.0e3}}`, want: "protocol:RATE_LIMITED"},
		{name: "scalar result", reply: `{` + p + `,"id":"$ID","ok":true,"result":42}`, want: "success"},
		{name: "null result", reply: `{` + p + `,"id":"$ID","ok":true,"result":null}`, want: "success"},
		{name: "null result error is no error", reply: `{` + p + `,"id":"$ID","ok":true,"result":{"error":null}}`, want: "success"},
		{name: "unknown members are ignored", reply: `{` + p + `,"id":"$ID","ok":true,"result":{},"trace":"x","extra":{"a":[1]}}`, want: "success"},
		{name: "approval granted", reply: `{` + p + `,"id":"$ID","ok":true,"result":{"approval":{"status":"granted"}}}`, want: "success",
			check: func(t *testing.T, r *client.Result) {
				if r.Approval != client.ApprovalGranted || !r.Completed() {
					t.Fatalf("result %+v", r)
				}
			}},
		{name: "approval denied", reply: `{` + p + `,"id":"$ID","ok":true,"result":{"approval":{"status":"denied"}}}`, want: "success",
			check: func(t *testing.T, r *client.Result) {
				if r.Approval != client.ApprovalDenied || r.Completed() {
					t.Fatalf("result %+v", r)
				}
			}},
		{name: "approval unknown", reply: `{` + p + `,"id":"$ID","ok":true,"result":{"approval":{"status":"unknown"}}}`, want: "success",
			check: func(t *testing.T, r *client.Result) {
				if r.Approval != client.ApprovalUnknown || r.Completed() {
					t.Fatalf("result %+v", r)
				}
			}},
		{name: "business failure with approval", reply: `{` + p + `,"id":"$ID","ok":true,"result":{"error":{"code":"DENIED"},"approval":{"status":"denied"}}}`, want: "business:DENIED"},
		{name: "wrapped reply from the expected app", app: "orders", reply: `{"channel":"pling.surface","kind":"response","app":"orders","envelope":{` + p + `,"id":"$ID","ok":true,"result":{}}}`, want: "success"},
		{name: "wrapped reply, no app expected", reply: `{"channel":"pling.surface","kind":"response","app":"billing","envelope":{` + p + `,"id":"$ID","ok":true,"result":{}}}`, want: "success"},

		// Not JSON, or not an object.
		{name: "empty", reply: ``, want: "unknown:reply", is: client.ErrBadReply},
		{name: "not JSON", reply: `<html>`, want: "unknown:reply", is: client.ErrBadReply},
		{name: "truncated", reply: `{` + p + `,"id":"$ID","ok":true,"result":{}`, want: "unknown:reply", is: client.ErrBadReply},
		{name: "trailing data", reply: `{` + p + `,"id":"$ID","ok":true,"result":{}} {}`, want: "unknown:reply", is: client.ErrBadReply},
		{name: "null", reply: `null`, want: "unknown:reply", is: client.ErrBadReply},
		{name: "array", reply: `[{` + p + `,"id":"$ID","ok":true,"result":{}}]`, want: "unknown:reply", is: client.ErrBadReply},
		{name: "invalid UTF-8", reply: `{` + p + `,"id":"$ID","ok":true,"result":"` + "\xff" + `"}`, want: "unknown:reply", is: client.ErrBadReply},
		{name: "too deep", reply: `{` + p + `,"id":"$ID","ok":true,"result":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}`, want: "unknown:reply", is: client.ErrBadReply},

		// Envelope fields.
		{name: "ok missing", reply: `{` + p + `,"id":"$ID","result":{}}`, want: "unknown:reply", is: client.ErrBadReply},
		{name: "ok as a string", reply: `{` + p + `,"id":"$ID","ok":"true","result":{}}`, want: "unknown:reply", is: client.ErrBadReply},
		{name: "ok as a number", reply: `{` + p + `,"id":"$ID","ok":1,"result":{}}`, want: "unknown:reply", is: client.ErrBadReply},
		{name: "ok in another case only", reply: `{` + p + `,"id":"$ID","OK":true,"result":{}}`, want: "unknown:reply", is: client.ErrBadReply},
		{name: "duplicate ok", reply: `{` + p + `,"id":"$ID","ok":false,"ok":true,"result":{}}`, want: "unknown:reply", is: client.ErrBadReply},
		{name: "case-variant id", reply: `{` + p + `,"id":"$ID","ID":"other","ok":true,"result":{}}`, want: "unknown:reply", is: client.ErrBadReply},
		{name: "protocol missing", reply: `{"id":"$ID","ok":true,"result":{}}`, want: "unknown:reply", is: client.ErrBadReply},
		{name: "other protocol", reply: `{"protocol":"pling.surface/0.2","id":"$ID","ok":true,"result":{}}`, want: "unknown:reply", is: client.ErrProtocolMismatch},
		{name: "other protocol refusing", reply: `{"protocol":"pling.surface/0.2","id":"$ID","ok":false,"error":{"code":"PROTOCOL_VERSION_UNSUPPORTED"}}`, want: "unknown:reply", is: client.ErrProtocolMismatch},
		{name: "id missing", reply: `{` + p + `,"ok":true,"result":{}}`, want: "unknown:reply", is: client.ErrBadReply},
		{name: "another id", reply: `{` + p + `,"id":"someone-else","ok":true,"result":{}}`, want: "unknown:reply", is: client.ErrIDMismatch},
		{name: "empty id on success", reply: `{` + p + `,"id":"","ok":true,"result":{}}`, want: "unknown:reply", is: client.ErrIDMismatch},
		{name: "failure for another id", reply: `{` + p + `,"id":"someone-else","ok":false,"error":{"code":"INVALID_REQUEST"}}`, want: "unknown:reply", is: client.ErrIDMismatch},
		{name: "ok true with an error", reply: `{` + p + `,"id":"$ID","ok":true,"result":{},"error":{"code":"INTERNAL_ERROR"}}`, want: "unknown:reply", is: client.ErrBadReply},
		{name: "ok true without result", reply: `{` + p + `,"id":"$ID","ok":true}`, want: "unknown:reply", is: client.ErrBadReply},
		{name: "ok false with a result", reply: `{` + p + `,"id":"$ID","ok":false,"result":{},"error":{"code":"INTERNAL_ERROR"}}`, want: "unknown:reply", is: client.ErrBadReply},
		{name: "ok false without error", reply: `{` + p + `,"id":"$ID","ok":false}`, want: "unknown:reply", is: client.ErrBadReply},
		{name: "error code missing", reply: `{` + p + `,"id":"$ID","ok":false,"error":{"message":"x"}}`, want: "unknown:reply", is: client.ErrBadReply},
		{name: "error as a string", reply: `{` + p + `,"id":"$ID","ok":false,"error":"RATE_LIMITED"}`, want: "unknown:reply", is: client.ErrBadReply},
		{name: "negative retryAfterMs", reply: `{` + p + `,"id":"$ID","ok":false,"error":{"code":"RATE_LIMITED","retryAfterMs":-1}}`, want: "unknown:reply", is: client.ErrBadReply},
		{name: "retryAfterMs as a string", reply: `{` + p + `,"id":"$ID","ok":false,"error":{"code":"RATE_LIMITED","retryAfterMs":"5"}}`, want: "unknown:reply", is: client.ErrBadReply},
		{name: "after not an object", reply: `{` + p + `,"id":"$ID","ok":true,"result":{},"after":[1]}`, want: "unknown:reply", is: client.ErrBadReply},
		{name: "after of the wrong shape", reply: `{` + p + `,"id":"$ID","ok":true,"result":{},"after":{"records":"SO-1"}}`, want: "unknown:reply", is: client.ErrBadReply},

		// Result conventions.
		{name: "result error as a string", reply: `{` + p + `,"id":"$ID","ok":true,"result":{"error":"locked"}}`, want: "unknown:reply", is: client.ErrBadReply},
		{name: "result error without code", reply: `{` + p + `,"id":"$ID","ok":true,"result":{"error":{"message":"x"}}}`, want: "unknown:reply", is: client.ErrBadReply},
		{name: "result error false", reply: `{` + p + `,"id":"$ID","ok":true,"result":{"error":false}}`, want: "unknown:reply", is: client.ErrBadReply},
		{name: "approval status unknown to the client", reply: `{` + p + `,"id":"$ID","ok":true,"result":{"approval":{"status":"approved"}}}`, want: "unknown:reply", is: client.ErrBadReply},
		{name: "approval status in another case", reply: `{` + p + `,"id":"$ID","ok":true,"result":{"approval":{"status":"Granted"}}}`, want: "unknown:reply", is: client.ErrBadReply},
		{name: "approval without status", reply: `{` + p + `,"id":"$ID","ok":true,"result":{"approval":{}}}`, want: "unknown:reply", is: client.ErrBadReply},
		{name: "approval as a string", reply: `{` + p + `,"id":"$ID","ok":true,"result":{"approval":"granted"}}`, want: "unknown:reply", is: client.ErrBadReply},
		{name: "approval null", reply: `{` + p + `,"id":"$ID","ok":true,"result":{"approval":null}}`, want: "unknown:reply", is: client.ErrBadReply},
		{name: "duplicate approval", reply: `{` + p + `,"id":"$ID","ok":true,"result":{"approval":{"status":"denied"},"approval":{"status":"granted"}}}`, want: "unknown:reply", is: client.ErrBadReply},

		// Wrappers.
		{name: "wrapped reply from another app", app: "orders", reply: `{"channel":"pling.surface","kind":"response","app":"billing","envelope":{` + p + `,"id":"$ID","ok":true,"result":{}}}`, want: "unknown:reply", is: client.ErrAppMismatch},
		{name: "wrapped reply without app", app: "orders", reply: `{"channel":"pling.surface","kind":"response","envelope":{` + p + `,"id":"$ID","ok":true,"result":{}}}`, want: "unknown:reply", is: client.ErrAppMismatch},
		{name: "wrapper on another channel", reply: `{"channel":"other","kind":"response","envelope":{` + p + `,"id":"$ID","ok":true,"result":{}}}`, want: "unknown:reply", is: client.ErrBadReply},
		{name: "wrapper of a request", reply: `{"channel":"pling.surface","kind":"request","envelope":{` + p + `,"id":"$ID","ok":true,"result":{}}}`, want: "unknown:reply", is: client.ErrBadReply},
		{name: "wrapper around nothing", reply: `{"channel":"pling.surface","kind":"response","envelope":null}`, want: "unknown:reply", is: client.ErrBadReply},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := client.New(canned(tt.reply), fast(client.Options{App: tt.app}))
			r, err := c.Invoke(context.Background(), "x.y", nil, client.InvokeOptions{})
			if got := outcome(r, err); got != tt.want {
				t.Fatalf("outcome %s (%v), want %s", got, err, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Fatalf("error %v is not %v", err, tt.is)
			}
			if err != nil && strings.Contains(err.Error(), "someone-else") == false && len(err.Error()) > 400 {
				t.Fatalf("error message is %d bytes long", len(err.Error()))
			}
			if tt.check != nil {
				tt.check(t, r)
			}
		})
	}
}

func TestDescribeReplies(t *testing.T) {
	const p = `"protocol":"pling.surface/0.1"`
	const ctx0 = `"context":{"regions":[],"records":[],"recordIds":[],"recordIdsTotal":0,"state":{},"feedback":[],"unavailable":[],"recordsTotal":0,"feedbackTotal":0,"unavailableTotal":0}`
	tests := []struct {
		name  string
		reply string
		app   string
		is    error // nil: a description
	}{
		// The specification's example (without result.protocol).
		{name: "spec example", reply: `{` + p + `,"id":"$ID","ok":true,"result":{"app":"orders","capabilities":[],` + ctx0 + `}}`},
		{name: "result protocol", reply: `{` + p + `,"id":"$ID","ok":true,"result":{` + p + `,"capabilities":[{"id":"a"}],` + ctx0 + `}}`},
		{name: "result protocol differs", reply: `{` + p + `,"id":"$ID","ok":true,"result":{"protocol":"pling.surface/0.2","capabilities":[],` + ctx0 + `}}`, is: client.ErrProtocolMismatch},
		{name: "result not an object", reply: `{` + p + `,"id":"$ID","ok":true,"result":[]}`, is: client.ErrBadReply},
		{name: "capabilities missing", reply: `{` + p + `,"id":"$ID","ok":true,"result":{` + ctx0 + `}}`, is: client.ErrBadReply},
		{name: "capabilities in another case", reply: `{` + p + `,"id":"$ID","ok":true,"result":{"Capabilities":[],` + ctx0 + `}}`, is: client.ErrBadReply},
		{name: "context missing", reply: `{` + p + `,"id":"$ID","ok":true,"result":{"capabilities":[]}}`, is: client.ErrBadReply},
		{name: "capability without id", reply: `{` + p + `,"id":"$ID","ok":true,"result":{"capabilities":[{"effect":"read"}],` + ctx0 + `}}`, is: client.ErrBadReply},
		{name: "duplicate capability", reply: `{` + p + `,"id":"$ID","ok":true,"result":{"capabilities":[{"id":"a"},{"id":"a"}],` + ctx0 + `}}`, is: client.ErrBadReply},
		{name: "template without param", reply: `{` + p + `,"id":"$ID","ok":true,"result":{"capabilities":[{"id":"a@b","record":{"total":1}}],` + ctx0 + `}}`, is: client.ErrBadReply},
		{name: "wrong field type", reply: `{` + p + `,"id":"$ID","ok":true,"result":{"capabilities":[{"id":7}],` + ctx0 + `}}`, is: client.ErrBadReply},
		{name: "unchanged when the full list was asked for", reply: `{` + p + `,"id":"$ID","ok":true,"result":{"capabilities":[],"capabilitiesUnchanged":true,` + ctx0 + `}}`, is: client.ErrBadReply},
		{name: "after on a describe", reply: `{` + p + `,"id":"$ID","ok":true,"result":{"capabilities":[],` + ctx0 + `},"after":{}}`, is: client.ErrBadReply},
		{name: "app expected, none said", app: "orders", reply: `{` + p + `,"id":"$ID","ok":true,"result":{"capabilities":[],` + ctx0 + `}}`, is: client.ErrAppMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := client.New(canned(tt.reply), fast(client.Options{App: tt.app}))
			d, err := c.Describe(context.Background(), client.DescribeInput{})
			if tt.is == nil {
				if err != nil || d == nil {
					t.Fatalf("got %v", err)
				}
				return
			}
			var rerr *client.ReplyError
			if d != nil || !errors.Is(err, tt.is) || !errors.As(err, &rerr) {
				t.Fatalf("got %+v, %v; want a *ReplyError %v", d, err, tt.is)
			}
		})
	}
}
