package redistest

import (
	"os/exec"
	"syscall"
)

// setParentDeath makes the kernel end the server if the test process dies
// without stopping it.
func setParentDeath(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
