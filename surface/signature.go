package surface

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strings"
	"sync"
	"time"
)

// signature fingerprints an effective capability list. Two lists with the
// same signature present the same capabilities to an agent.
func signature(caps []Capability) string {
	b, err := json.Marshal(caps)
	if err != nil {
		return "" // never equal to a stored signature: treated as changed
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:16])
}

// signatureCache remembers, per session, the capability signature last sent,
// with the route and scope it was computed under. A navigation, a scope
// change or a revocation therefore invalidates it.
type signatureCache struct {
	max int

	mu sync.Mutex
	m  map[string]sigEntry
}

type sigEntry struct {
	sig, route, scope string
}

func newSignatureCache(max int) *signatureCache {
	return &signatureCache{max: max, m: make(map[string]sigEntry)}
}

func sessionKey(sess *Session) (key, scope string) {
	if sess == nil {
		return "", "*" // open mode: one anonymous caller
	}
	ids := append([]string(nil), sess.Scope...)
	sort.Strings(ids)
	// The expiry and delegation belong to the grant: a session id granted
	// again after a revocation is a new grant, and its first "changed"
	// describe gets the full list.
	grant := sess.ExpiresAt.UTC().Format(time.RFC3339Nano) + "\x00" + sess.DelegationID
	return sess.SessionID, grant + "\x00" + strings.Join(ids, "\x00")
}

func (c *signatureCache) unchanged(sess *Session, route, sig string) bool {
	if sig == "" {
		return false
	}
	key, scope := sessionKey(sess)
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	return ok && e == sigEntry{sig: sig, route: route, scope: scope}
}

func (c *signatureCache) store(sess *Session, route, sig string) {
	key, scope := sessionKey(sess)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[key]; !ok && len(c.m) >= c.max {
		// Evict an arbitrary entry: the cost is one full list for that
		// session, and memory stays bounded.
		for k := range c.m {
			delete(c.m, k)
			break
		}
	}
	c.m[key] = sigEntry{sig: sig, route: route, scope: scope}
}

func (c *signatureCache) forget(sessionID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, sessionID)
}
