//go:build !(js || wasip1)

package mcpfacade

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"pling.dev/agent/client"
)

// An answer the facade refuses (larger than the bound, not JSON) is an
// answer: start-up does not wait for a better one, which would take the
// whole start-up wait.
func TestFirstSyncStopsAtARefusedReply(t *testing.T) {
	for name, reply := range map[string]func() ([]byte, error){
		"too large": func() ([]byte, error) { return nil, client.ReplyTooLarge(2 << 20) },
		"not JSON":  func() ([]byte, error) { return []byte("<html>"), nil },
	} {
		t.Run(name, func(t *testing.T) {
			var calls atomic.Int32
			tr := client.TransportFunc(func(context.Context, []byte) ([]byte, error) {
				calls.Add(1)
				return reply()
			})
			f := New(client.New(tr, client.Options{Retries: -1}), Options{})
			err := firstSync(context.Background(), f)
			var rerr *client.ReplyError
			if !errors.As(err, &rerr) || calls.Load() != 1 {
				t.Fatalf("firstSync: %v after %d describes, want the refusal after one", err, calls.Load())
			}
		})
	}
}
