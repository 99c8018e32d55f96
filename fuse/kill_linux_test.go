package fuse

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestKilledBuilderLeavesNothing replays a build killed with SIGKILL while
// its digests are spilled: a real child process (this test binary) spills,
// says so and waits; the parent kills it and finds the folder as it was
// (the spill file was unlinked when it was made), and a next build in the
// same folder works.
func TestKilledBuilderLeavesNothing(t *testing.T) {
	if dir := os.Getenv("FUSE_KILL_CHILD"); dir != "" {
		b, err := NewBuilder(filepath.Join(dir, "f.fuse"), 0.01, WithMemory(1<<16))
		if err != nil {
			os.Exit(3)
		}
		for _, k := range keySet(1, 50000) {
			if err := b.Add(k); err != nil {
				os.Exit(4)
			}
		}
		if !b.Spilled() {
			os.Exit(5)
		}
		os.Stdout.WriteString("spilled\n")
		time.Sleep(time.Minute)
		os.Exit(6)
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledBuilderLeavesNothing$")
	cmd.Env = append(os.Environ(), "FUSE_KILL_CHILD="+dir)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "spilled", strings.TrimSpace(line))
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	require.Error(t, cmd.Wait())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "a killed build leaves nothing behind")

	f := buildFile(t, filepath.Join(dir, "f.fuse"), keySet(1, 50000), 0.01, WithMemory(1<<16))
	requireAll(t, f, keySet(1, 50000))
}
