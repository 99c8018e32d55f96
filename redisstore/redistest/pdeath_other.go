//go:build !linux

package redistest

import "os/exec"

// setParentDeath does nothing where the kernel offers no parent-death
// signal; Stop ends the server.
func setParentDeath(*exec.Cmd) {}
