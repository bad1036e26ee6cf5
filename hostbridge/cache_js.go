//go:build js && wasm

package hostbridge

// lastText remembers the value parsed from the last text it saw. Views and
// sessions are pure functions of their JSON text, and a page answers the
// same text again and again while nothing changes, so a string comparison
// replaces a decode (encoding/json is about five times slower in wasm than
// natively). The cached value is shared: the kernel only reads views and
// sessions, and callers copy the top-level struct before setting fields.
// No lock: the module runs on one thread and nothing here blocks, so no
// other call runs in between.
type lastText[T any] struct {
	text string
	val  *T
}

// getBytes is get for a text still in bytes: no string is made of it.
func (c *lastText[T]) getBytes(text []byte) (*T, bool) {
	if c.val != nil && c.text == string(text) {
		return c.val, true
	}
	return nil, false
}

// value returns the value last put, whatever its text.
func (c *lastText[T]) value() *T {
	return c.val
}

func (c *lastText[T]) put(text string, v *T) {
	c.text, c.val = text, v
}

// textCache is lastText with a few entries. Describe and invoke read the
// view with different queries (a window, one record), so a page that does
// not change answers a handful of texts in turn; one entry would miss on
// every switch between them and decode again.
type textCache[T any] struct {
	entries [textCacheSize]struct {
		text string
		val  *T
	}
	next int // the entry put replaces: the oldest
}

const textCacheSize = 4

// getBytes is get for a text still in bytes: no string is made of it.
func (c *textCache[T]) getBytes(text []byte) (*T, bool) {
	for i := range c.entries {
		if e := &c.entries[i]; e.val != nil && e.text == string(text) {
			return e.val, true
		}
	}
	return nil, false
}

func (c *textCache[T]) put(text string, v *T) {
	e := &c.entries[c.next]
	e.text, e.val = text, v
	c.next = (c.next + 1) % textCacheSize
}
