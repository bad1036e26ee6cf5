//go:build js && wasm

package hostbridge

import "sync"

// lastText remembers the value parsed from the last text it saw. Views and
// sessions are pure functions of their JSON text, and a page answers the
// same text again and again while nothing changes, so a string comparison
// replaces a decode (encoding/json is about five times slower in wasm than
// natively). The cached value is shared: the kernel only reads views and
// sessions, and callers copy the top-level struct before setting fields.
type lastText[T any] struct {
	mu   sync.Mutex
	text string
	val  *T
}

func (c *lastText[T]) get(text string) (*T, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.val != nil && c.text == text {
		return c.val, true
	}
	return nil, false
}

func (c *lastText[T]) put(text string, v *T) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.text, c.val = text, v
}
