package surface

// Held is how many keys the in-process limiter or claims the in-process
// guard holds: tests check that both stay bounded.
func Held(v any) int {
	switch v := v.(type) {
	case *memoryGuard:
		return v.Len()
	case *slidingWindow:
		return v.Len()
	}
	panic("Held: not an in-process limiter or guard")
}
