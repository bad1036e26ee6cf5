//go:build unix && !linux

package devtools

import "os/exec"

// killWithParent does nothing here, as chromedp's default ModifyCmdFunc.
func killWithParent(*exec.Cmd) {}
