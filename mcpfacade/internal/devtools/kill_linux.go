//go:build linux

package devtools

import (
	"os/exec"
	"syscall"
)

// killWithParent makes the kernel kill the browser when this process dies,
// as chromedp's default ModifyCmdFunc does on Linux.
func killWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = new(syscall.SysProcAttr)
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
