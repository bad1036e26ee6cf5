package redisstate

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"

	"pling.dev/agent/surface"
)

// TestGuardKeyVectors: a claim's Redis key ends in the hash that
// testdata/claimkeys names, the hash the page's IndexedDB guard stores its
// claims under: after the prefix, nothing of either id.
func TestGuardKeyVectors(t *testing.T) {
	raw, err := os.ReadFile("../testdata/claimkeys/keys.json")
	if err != nil {
		t.Fatal(err)
	}
	var vectors []struct {
		Name      string `json:"name"`
		SessionID string `json:"sessionId"`
		RequestID string `json:"requestId"`
		SHA256    string `json:"sha256"`
	}
	if err := json.Unmarshal(raw, &vectors); err != nil {
		t.Fatal(err)
	}
	if len(vectors) == 0 {
		t.Fatal("no vectors")
	}
	// Key never reaches Redis: a client that could not connect names keys all the same.
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	g, err := NewGuard(c, Options{App: "orders"})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vectors {
		t.Run(v.Name, func(t *testing.T) {
			key := g.Key(surface.ReplayKey{SessionID: v.SessionID, RequestID: v.RequestID})
			if want := "pling:rp:6:orders:" + v.SHA256; key != want {
				t.Fatalf("key %q, want %q", key, want)
			}
		})
	}
}
