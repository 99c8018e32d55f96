package filtertest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// CreateOnFullDisk runs the calling test's binary again in a private mount
// namespace with a 1 MiB tmpfs, where it creates filters of v: a real
// ENOSPC, not a simulation. (Where the sandbox forbids namespaces, the child
// instead lowers RLIMIT_FSIZE to 1 MiB, which fails the same allocation with
// EFBIG.) t must be a top-level test: the child runs it by name and takes
// the child's part.
func CreateOnFullDisk[F Stream[F]](t *testing.T, v Variant[F]) {
	if os.Getenv("BLOOMKIT_FULLDISK_CHILD") != "" {
		fullDiskChild(t, v)
		return
	}
	run := func(mode string, attr *syscall.SysProcAttr) ([]byte, error) {
		cmd := exec.Command(os.Args[0], "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.v")
		cmd.Env = append(os.Environ(), "BLOOMKIT_FULLDISK_CHILD="+mode, "BLOOMKIT_FULLDISK_DIR="+t.TempDir())
		cmd.SysProcAttr = attr
		return cmd.CombinedOutput()
	}
	out, err := run("tmpfs", &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	})
	if err != nil && errors.Is(err, syscall.EPERM) || err != nil && len(out) == 0 {
		t.Logf("no user namespaces here (%v): using RLIMIT_FSIZE", err)
		out, err = run("rlimit", nil)
	}
	t.Logf("child:\n%s", out)
	require.NoError(t, err)
	require.Contains(t, string(out), "FULLDISK-OK")
}

func fullDiskChild[F Stream[F]](t *testing.T, v Variant[F]) {
	dir := os.Getenv("BLOOMKIT_FULLDISK_DIR")
	want := syscall.EFBIG
	switch os.Getenv("BLOOMKIT_FULLDISK_CHILD") {
	case "tmpfs":
		require.NoError(t, syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"))
		want = syscall.ENOSPC
	case "rlimit":
		require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: 1 << 20, Max: 1 << 20}))
	}
	// 10 MB or more of cells cannot be allocated: Create fails, leaves
	// nothing behind.
	big := filepath.Join(dir, "big.bloom")
	_, err := v.Create(big, 8_000_000, 0.01, 0)
	require.ErrorIs(t, err, want)
	_, statErr := os.Stat(big)
	require.ErrorIs(t, statErr, os.ErrNotExist)
	_, err = v.CreateTemp(big, 8_000_000, 0.01, 0)
	require.ErrorIs(t, err, want)
	entries, _ := os.ReadDir(dir)
	require.Empty(t, entries, "no temporary file left behind")

	// A filter that fits works, and so does its lifecycle, on the same disk.
	small := filepath.Join(dir, "small.bloom")
	f, err := v.Create(small, 50_000, 0.01, 0)
	require.NoError(t, err)
	AddKeys(f, 1, 50_000)
	require.NoError(t, f.Close())
	r, err := v.OpenReadOnly(small)
	require.NoError(t, err)
	NoFalseNegatives(t, r, 1, 50_000)
	require.NoError(t, r.Verify())
	require.NoError(t, r.Close())

	// WriteFile of an in-memory filter that does not fit fails cleanly and
	// leaves the existing file intact.
	m, err := v.New(2_000_000, 0.01, 0)
	require.NoError(t, err)
	require.ErrorIs(t, m.WriteFile(small), want)
	r, err = v.OpenReadOnly(small)
	require.NoError(t, err)
	require.NoError(t, r.Verify())
	require.NoError(t, r.Close())
	entries, _ = os.ReadDir(dir)
	require.Len(t, entries, 1)
	os.Stdout.WriteString("FULLDISK-OK\n")
}
