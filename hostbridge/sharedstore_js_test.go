//go:build js && wasm

package hostbridge

import "testing"

// TestJSSharedStores runs js/test/shared.test.mjs: asynchronous limiters
// and guards (pling-shared.js and adapters that answer later) through the
// kernel, with the API bound as loadSurface binds it.
func TestJSSharedStores(t *testing.T) { runJSSuite(t, "../js/test/shared.test.mjs") }
