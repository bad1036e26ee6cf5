package surface

import (
	"slices"
	"sync"
	"sync/atomic"

	"pling.dev/agent/internal/jsonwrite"
)

// capSet is what describe derives from the registry's actions for one
// session scope: the effective capabilities, what was withheld, and the
// list's encoding and signature. It is shared between requests once cached
// and must not be changed.
type capSet struct {
	caps     []Capability // never nil
	withheld []Unavailable
	json     []byte // encoding of caps; nil when it could not be encoded
	shown    []byte // encoding of caps cut at Limits.MaxCapabilities, when cut
	sig      string // "" when caps could not be encoded: never "unchanged"
	// jsonID and shownID name json and shown once the set is cached (0
	// before): equal ids mean equal bytes (see SharedCaps).
	jsonID, shownID uint64
}

// lastCapsID numbers cached capability encodings across all surfaces of the
// process, so an id never names two different lists.
var lastCapsID atomic.Uint64

// capabilities returns the session's capability set for view, from the
// cache when the registry named its actions' version.
func (s *Surface) capabilities(view *View, sess *Session) *capSet {
	if view.ActionsVersion == "" {
		return s.buildCapSet(view, sess)
	}
	if cs := s.capCache.get(view.ActionsVersion, sess); cs != nil {
		return cs
	}
	cs := s.buildCapSet(view, sess)
	if cs.json != nil {
		cs.jsonID = lastCapsID.Add(1)
	}
	if cs.shown != nil {
		cs.shownID = lastCapsID.Add(1)
	}
	s.capCache.put(view.ActionsVersion, sess, cs)
	return cs
}

func (s *Surface) buildCapSet(view *View, sess *Session) *capSet {
	set := s.effective(view, sess)
	cs := &capSet{caps: set.caps, withheld: set.withheld}
	if cs.caps == nil {
		cs.caps = []Capability{}
	}
	b, err := encodeCapabilities(cs.caps)
	if err != nil {
		return cs // encoding the response fails the same way later
	}
	cs.json, cs.sig = b, s.sigs.signature(b)
	if max := s.opts.Limits.MaxCapabilities; len(cs.caps) > max {
		cs.shown, _ = encodeCapabilities(cs.caps[:max])
	}
	return cs
}

// encodeCapabilities encodes a capability list as encoding/json would.
func encodeCapabilities(caps []Capability) ([]byte, error) {
	w := wire{Writer: jsonwrite.Writer{B: make([]byte, 0, 256*len(caps)+2)}}
	w.capabilities(caps)
	if w.err == nil && !w.Slow {
		return w.B, nil
	}
	return marshalStd(caps)
}

// capCache holds the capability sets derived from one actions version, one
// per session scope seen under it (open mode is one more). A new version
// drops them all: versions move on, they do not come back.
type capCache struct {
	mu      sync.Mutex
	version string
	entries []capEntry // oldest first
}

type capEntry struct {
	open  bool     // no session: open mode
	scope []string // the session's scope, as given (order matters only to the cache)
	set   *capSet
}

// capCacheSize bounds the scopes remembered per version. Sessions of one
// page usually share a handful of scopes; past the bound the oldest goes.
const capCacheSize = 64

func (c *capCache) get(version string, sess *Session) *capSet {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.version != version {
		return nil
	}
	for i := len(c.entries) - 1; i >= 0; i-- {
		if e := &c.entries[i]; e.matches(sess) {
			return e.set
		}
	}
	return nil
}

func (c *capCache) put(version string, sess *Session, set *capSet) {
	e := capEntry{open: sess == nil, set: set}
	if sess != nil {
		e.scope = slices.Clone(sess.Scope)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.version != version {
		c.version = version
		clear(c.entries)
		c.entries = c.entries[:0]
	}
	if len(c.entries) >= capCacheSize {
		n := copy(c.entries, c.entries[1:])
		c.entries[n] = capEntry{}
		c.entries = c.entries[:n]
	}
	c.entries = append(c.entries, e)
}

func (e *capEntry) matches(sess *Session) bool {
	if sess == nil {
		return e.open
	}
	return !e.open && slices.Equal(e.scope, sess.Scope)
}

// detach makes d safe to hand to a caller: the capability list may be the
// cached one shared by every request, so the caller gets its own copy (and
// its own record metadata), and the cached encoding is dropped because the
// caller may change the list before encoding it.
func (d *Description) detach() {
	caps := make([]Capability, len(d.Capabilities))
	copy(caps, d.Capabilities)
	for i := range caps {
		if r := caps[i].Record; r != nil {
			c := *r
			caps[i].Record = &c
		}
	}
	if d.Capabilities == nil {
		caps = nil
	}
	d.Capabilities = caps
	d.capsJSON, d.capsLen, d.capsID = nil, 0, 0
}
