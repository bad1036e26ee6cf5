package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMCPConformanceSuite runs the official MCP conformance suite
// (@modelcontextprotocol/conformance, pinned in
// mcpfacade/testdata/conformance with a Node >= 22 from npm, installed once
// into build/mcp-conformance) against pling-mcp over streamable HTTP in
// front of the demo. The scenarios that need the suite's own fixture
// tools, prompts or resources, or features pling-mcp does not offer, are
// listed once, in not-applicable.yaml, as the suite's expected failures;
// every other scenario must pass, and a listed one that passes fails the
// run.
func TestMCPConformanceSuite(t *testing.T) {
	dir := npmDir(t, "the MCP conformance suite and its Node", filepath.Join("..", "mcpfacade", "testdata", "conformance"), "mcp-conformance",
		[]string{"package.json", "package-lock.json"}, false)
	bin := filepath.Join(dir, "node_modules", ".bin")
	if out, err := exec.Command(filepath.Join(bin, "node"), "--version").CombinedOutput(); err != nil || !strings.HasPrefix(string(out), "v22.") {
		t.Fatalf("the conformance suite's Node: %v %s", err, out)
	}
	facade := buildFacade(t)
	br := startMCPBrowser(t)
	url := siteURL + "/?conformance=" + randomHex(t, 6)
	openMCPDemo(t, br, url)
	endpoint := serveFacadeHTTP(t, facade, "-devtools", br.wsURL, "-url", url, "-app", "orders", "-poll", "0")

	list, err := filepath.Abs(filepath.Join("..", "mcpfacade", "testdata", "conformance", "not-applicable.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(bin, "conformance"), "server", "--url", endpoint, "--expected-failures", list, "-o", t.TempDir())
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the conformance suite failed against pling-mcp: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
