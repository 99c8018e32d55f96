//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestMain runs the soak command itself when a test starts this binary as
// a child (SOAK_TEST_CHILD set), so that a test can signal a real soak
// process.
func TestMain(m *testing.M) {
	if os.Getenv("SOAK_TEST_CHILD") != "" {
		os.Args = append([]string{"soak"}, strings.Fields(os.Getenv("SOAK_TEST_CHILD"))...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestRunInterruptedRemovesItsFiles: Ctrl-C (SIGINT to the foreground
// process group) or a plain kill (SIGTERM to soak alone) while a step's
// bloomkit runs ends soak with an error, the step's command stopped, and
// removes the key file and filter it made (at 10^9 keys, 27 GB), as the
// end of a run does.
func TestRunInterruptedRemovesItsFiles(t *testing.T) {
	for _, c := range []struct {
		name  string
		group bool // the signal goes to the process group, as a terminal sends Ctrl-C
		sig   syscall.Signal
	}{{"ctrl-c", true, syscall.SIGINT}, {"kill", false, syscall.SIGTERM}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			work := filepath.Join(dir, "work")
			require.NoError(t, os.Mkdir(work, 0o755))
			// A bloomkit that records its pid and runs until it is signalled.
			fake := filepath.Join(dir, "bloomkit")
			pidFile := filepath.Join(dir, "bloomkit.pid")
			require.NoError(t, os.WriteFile(fake, []byte("#!/bin/sh\necho $$ > "+pidFile+"\nexec sleep 30\n"), 0o755))

			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "SOAK_TEST_CHILD=run -n 1000 -dir "+work+" -bloomkit "+fake)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its own group, as a shell's job
			var out strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &out
			require.NoError(t, cmd.Start())
			var pid int
			require.Eventually(t, func() bool {
				b, err := os.ReadFile(pidFile)
				if err != nil || len(b) == 0 || b[len(b)-1] != '\n' {
					return false
				}
				pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
				return err == nil
			}, 5*time.Second, 5*time.Millisecond, "the build step starts")

			target := cmd.Process.Pid
			if c.group {
				target = -target
			}
			require.NoError(t, syscall.Kill(target, c.sig))
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				require.Error(t, err, "an interrupted soak fails: %s", out.String())
			case <-time.After(5 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("soak did not end after %v: %s", c.sig, out.String())
			}
			entries, err := os.ReadDir(work)
			require.NoError(t, err)
			var left []string
			for _, e := range entries {
				left = append(left, e.Name())
			}
			require.Empty(t, left, "files left behind: %s", out.String())
			require.ErrorIs(t, syscall.Kill(pid, 0), syscall.ESRCH, "the step's bloomkit was stopped")
		})
	}
}
