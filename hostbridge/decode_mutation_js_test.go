//go:build js && wasm

package hostbridge

import (
	"math/rand/v2"
	"testing"
)

// Go's fuzzing needs a native build, and hostbridge only builds for js, so
// the bridge's readers get a seeded mutation test instead: valid texts of
// the kinds they read, bent by random edits, each compared with
// decodeExact by checkDecoder (the same value, or both an error).
func TestReaderMutations(t *testing.T) {
	seeds := []struct {
		text  string
		check func(*testing.T, string) bool
	}{
		{`{"app":"orders","expose":["a","b@order"],"recordLimit":8,"maxRecordLimit":100,"rateLimit":{"maxRequests":60,"windowMs":60000},"replay":{"windowMs":300000},"executeTimeoutMs":30000,"hostTimeoutMs":10000}`, checkConfig},
		{`{"app":"x","rateLimit":null,"replay":null}`, checkConfig},
		{`{"agentId":"agent-1","sessionId":"s-1","userId":"u-1","expiresAt":1893456000000,"scope":["update_note@order"],"delegationId":"d-1","revokedAt":null}`, checkSession},
		{`{"agentId":"a","sessionId":"s","userId":"u","expiresAt":1.5e12,"scope":[]}`, checkSession},
		{`[true,false,true,true]`, checkBools},
		{`[]`, checkBools},
		{`{"record":["a","b\u00e9"],"offset":0,"limit":1.0,"x":{"y":[null,true,-1e5]}}`, checkTree},
	}
	// Bytes that matter to a JSON reader, and a few that must not.
	alphabet := []byte(`{}[]",:\ -+.0123456789eEtruefalsnl` + "\x00\x7f\xc3\xa9\t\n")
	rng := rand.New(rand.NewPCG(1, 2))
	const perSeed = 1500
	took := 0
	for _, s := range seeds {
		for range perSeed {
			b := []byte(s.text)
			for range 1 + rng.IntN(3) {
				switch i := rng.IntN(len(b) + 1); rng.IntN(4) {
				case 0: // replace
					if i < len(b) {
						b[i] = alphabet[rng.IntN(len(alphabet))]
					}
				case 1: // insert
					b = append(b[:i], append([]byte{alphabet[rng.IntN(len(alphabet))]}, b[i:]...)...)
				case 2: // delete
					if i < len(b) {
						b = append(b[:i], b[i+1:]...)
					}
				case 3: // duplicate a span, which repeats members and values
					j := i + rng.IntN(12)
					if j > len(b) {
						j = len(b)
					}
					b = append(b[:j], append(append([]byte{}, b[i:j]...), b[j:]...)...)
				}
			}
			if s.check(t, string(b)) {
				took++
			}
		}
	}
	// The edits must leave some texts readable, or no value was ever
	// compared.
	if took == 0 {
		t.Fatal("none of the mutated texts was read")
	}
	t.Logf("%d of %d mutated texts read", took, perSeed*len(seeds))
}
