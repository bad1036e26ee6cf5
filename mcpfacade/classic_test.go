//go:build !(js || wasip1)

package mcpfacade

import (
	"os/exec"
	"testing"
)

// The classic build the facade evaluates is generated from the client
// library (go generate ./mcpfacade): regenerated here, it must be the same
// bytes, so the caller in the page never drifts from the library.
func TestClassicClientIsGenerated(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: cannot regenerate pling-client.classic.js")
	}
	out, err := exec.Command(node, "../js/client/classic.mjs", "../js/client/pling-client.js").Output()
	if err != nil {
		t.Fatalf("classic.mjs: %v", err)
	}
	if string(out) != classicClient {
		t.Fatal("mcpfacade/pling-client.classic.js is not what classic.mjs makes of js/client/pling-client.js: run go generate ./mcpfacade")
	}
}
