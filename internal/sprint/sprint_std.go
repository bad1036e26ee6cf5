//go:build !(js && wasm)

package sprint

import "fmt"

// Sprint is fmt.Sprint(v).
func Sprint(v any) string { return fmt.Sprint(v) }
