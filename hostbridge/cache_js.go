//go:build js && wasm

package hostbridge

// textCache remembers the values parsed from the last few texts it saw.
// Views and sessions are pure functions of their JSON text, and a page
// answers the same few texts again and again while nothing changes
// (describe and invoke read the view with different queries: a window, one
// record), so a string comparison replaces a decode (encoding/json is about
// five times slower in wasm than natively). The cached value is shared: the
// kernel only reads views and sessions, and callers copy the top-level
// struct before setting fields. No lock: the module runs on one thread and
// nothing here blocks, so no other call runs in between.
type textCache[T any] struct {
	entries [textCacheSize]struct {
		text string
		val  *T
	}
	next int // the entry put replaces: the oldest
}

const textCacheSize = 4

// getBytes answers the value parsed from text, if it is kept.
func (c *textCache[T]) getBytes(text []byte) (*T, bool) {
	for i := range c.entries {
		if e := &c.entries[i]; e.val != nil && e.text == string(text) {
			return e.val, true
		}
	}
	return nil, false
}

// last answers the value put last, whatever its text.
func (c *textCache[T]) last() *T {
	return c.entries[(c.next+textCacheSize-1)%textCacheSize].val
}

func (c *textCache[T]) put(text string, v *T) {
	e := &c.entries[c.next]
	e.text, e.val = text, v
	c.next = (c.next + 1) % textCacheSize
}
