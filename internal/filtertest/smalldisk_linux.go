package filtertest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// OnSmallDisk runs child in a copy of the calling test's process, in a
// private mount namespace, with dir a small file system of about size bytes
// (at least 4 MiB) mounted for it alone: a real disk that fills up, not a
// simulation. It vanishes with the child process.
//
// As root, with mkfs.ext4 at hand, the file system is ext4 on a loop device:
// ext4 keeps the blocks of a fallocate that failed half way, as most disk
// file systems do, which is what a test of the undo of a failed allocation
// needs. Otherwise it is a tmpfs in a user namespace (tmpfs gives back a
// failed fallocate by itself); fsType tells the child which it got. t must
// be a top-level test: the child runs it by name.
func OnSmallDisk(t *testing.T, size int64, child func(t *testing.T, dir, fsType string)) {
	if os.Getenv("BLOOMKIT_SMALLDISK_CHILD") != "" {
		smallDiskChild(t, size, child)
		return
	}
	attr := &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS}
	mode := "ext4"
	if _, err := exec.LookPath("mkfs.ext4"); os.Geteuid() != 0 || err != nil {
		mode = "tmpfs"
		attr = &syscall.SysProcAttr{
			Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.v")
	cmd.Env = append(os.Environ(), "BLOOMKIT_SMALLDISK_CHILD="+mode)
	cmd.SysProcAttr = attr
	out, err := cmd.CombinedOutput()
	t.Logf("child on a small %s:\n%s", mode, out)
	require.NoError(t, err)
	require.Contains(t, string(out), "SMALLDISK-OK")
}

func smallDiskChild(t *testing.T, size int64, child func(t *testing.T, dir, fsType string)) {
	mode := os.Getenv("BLOOMKIT_SMALLDISK_CHILD")
	base := t.TempDir()
	dir := filepath.Join(base, "disk")
	require.NoError(t, os.Mkdir(dir, 0o755))
	// Nothing mounted here may reach the parent's namespace.
	require.NoError(t, syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""))
	switch mode {
	case "ext4":
		img := filepath.Join(base, "disk.img")
		require.NoError(t, os.WriteFile(img, nil, 0o600))
		require.NoError(t, os.Truncate(img, size))
		out, err := exec.Command("mkfs.ext4", "-q", "-F", img).CombinedOutput()
		require.NoError(t, err, "mkfs.ext4: %s", out)
		out, err = exec.Command("mount", "-o", "loop", img, dir).CombinedOutput()
		require.NoError(t, err, "mount: %s", out)
	default:
		require.NoError(t, syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)))
	}
	t.Cleanup(func() { syscall.Unmount(dir, 0) })
	child(t, dir, mode)
	if !t.Failed() {
		os.Stdout.WriteString("SMALLDISK-OK\n")
	}
}

// FreeBytes returns the bytes free (root's reserve included) on the file
// system that holds path.
func FreeBytes(t testing.TB, path string) int64 {
	t.Helper()
	var st syscall.Statfs_t
	require.NoError(t, syscall.Statfs(path, &st))
	return int64(st.Bfree) * int64(st.Bsize)
}

// CopySparse copies the file src to dst (which must not exist) writing only
// its non-zero 4 KiB pages, as `cp --sparse=always` or a sparse-aware
// restore would: the zero pages become holes that a later writer must
// allocate.
func CopySparse(t testing.TB, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	require.NoError(t, err)
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	require.NoError(t, err)
	defer out.Close()
	zero := make([]byte, 4096)
	for off := 0; off < len(data); off += 4096 {
		page := data[off:min(off+4096, len(data))]
		if string(page) != string(zero[:len(page)]) {
			_, err := out.WriteAt(page, int64(off))
			require.NoError(t, err)
		}
	}
	require.NoError(t, out.Truncate(int64(len(data))))
}
