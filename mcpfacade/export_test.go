package mcpfacade

import "time"

// PausedFor is how long f waits before reading the list again after a
// RATE_LIMITED answer.
func PausedFor(f *Facade) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return time.Until(f.pausedUntil)
}
