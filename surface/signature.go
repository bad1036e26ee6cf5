package surface

import (
	"hash/maphash"
	"slices"
	"sync"
	"time"
)

// signature fingerprints an effective capability list from its encoding.
// Two lists with the same signature present the same capabilities to an
// agent. The fingerprint only has to tell this process's lists apart, so
// two seeded 64-bit hashes stand in for a cryptographic digest, which costs
// several times more under WebAssembly (and its code and tables are the
// larger part of crypto in the binary).
func (c *signatureCache) signature(encoded []byte) string {
	h0, h1 := maphash.Bytes(c.seeds[0], encoded), maphash.Bytes(c.seeds[1], encoded)
	var b [16]byte
	for i := range 8 {
		b[i], b[8+i] = byte(h0>>(8*i)), byte(h1>>(8*i))
	}
	return string(b[:])
}

// signatureCache remembers, per session, the capability signature last sent,
// with the route and scope it was computed under. A navigation, a scope
// change or a revocation therefore invalidates it.
type signatureCache struct {
	max   int
	seeds [2]maphash.Seed

	mu sync.Mutex
	m  map[string]sigEntry
}

type sigEntry struct {
	sig, route string
	// The grant the signature was sent under. The expiry and delegation
	// belong to it: a session id granted again after a revocation is a new
	// grant, and its first "changed" describe gets the full list.
	open       bool // no session: open mode, one anonymous caller
	expires    time.Time
	delegation string
	scope      []string // as the session gave it
	sorted     []string // the same ids in order: a reordered scope is the same scope
}

func newSignatureCache(max int) *signatureCache {
	return &signatureCache{max: max, m: make(map[string]sigEntry),
		seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}}
}

func sessionKey(sess *Session) string {
	if sess == nil {
		return ""
	}
	return sess.SessionID
}

// sameGrant reports whether e was stored under sess's grant and scope.
func (e *sigEntry) sameGrant(sess *Session) bool {
	if sess == nil || e.open {
		return sess == nil && e.open
	}
	if !e.expires.Equal(sess.ExpiresAt) || e.delegation != sess.DelegationID {
		return false
	}
	if slices.Equal(e.scope, sess.Scope) {
		return true // the usual case: the same scope, no sorting needed
	}
	if len(e.sorted) != len(sess.Scope) {
		return false
	}
	ids := slices.Clone(sess.Scope)
	slices.Sort(ids)
	return slices.Equal(e.sorted, ids)
}

func (c *signatureCache) unchanged(sess *Session, route, sig string) bool {
	if sig == "" {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[sessionKey(sess)]
	return ok && e.sig == sig && e.route == route && e.sameGrant(sess)
}

func (c *signatureCache) store(sess *Session, route, sig string) {
	key := sessionKey(sess)
	c.mu.Lock()
	defer c.mu.Unlock()
	old, ok := c.m[key]
	if ok && old.sig == sig && old.route == route && old.sameGrant(sess) {
		return // nothing changed: no copy of the scope
	}
	if !ok && len(c.m) >= c.max {
		// Evict an arbitrary entry: the cost is one full list for that
		// session, and memory stays bounded.
		for k := range c.m {
			delete(c.m, k)
			break
		}
	}
	e := sigEntry{sig: sig, route: route, open: sess == nil}
	if sess != nil {
		e.expires, e.delegation = sess.ExpiresAt, sess.DelegationID
		e.scope = slices.Clone(sess.Scope)
		e.sorted = slices.Clone(sess.Scope)
		slices.Sort(e.sorted)
	}
	c.m[key] = e
}

func (c *signatureCache) forget(sessionID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, sessionID)
}
