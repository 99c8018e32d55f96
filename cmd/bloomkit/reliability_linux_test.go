package main

// End-to-end tests of issue 14's CLI rows: inputs that cannot be read twice,
// signals, dedup's state, full disks and damaged files, each replaying what
// the operator did with the built binary.

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSignalsStopCleanly: SIGINT or SIGTERM in add, build and union stops
// reading, closes the state file (add: sealed, with every key it read),
// removes temporary files and exits 128 + the signal number.
func TestSignalsStopCleanly(t *testing.T) {
	t.Parallel() // waits on child processes: runs beside the others that do (TestMain)
	t.Run("add", func(t *testing.T) {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
			dir := t.TempDir()
			bk(t, dir, "", "create", "-n", "1e6", "f.bloom").ok(t)
			p := startBK(t, dir, true, nil, "add", "f.bloom")
			keys := bigKeys("k", 4<<20)
			_, err := io.WriteString(p.stdin, keys)
			require.NoError(t, err)
			p.signal(t, sig)
			r := p.wait(t, 20*time.Second)
			p.stdin.Close()
			r.interruptedBy(t, sig, map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM"}[sig])
			require.Regexp(t, `^\d+ keys read, \d+ new \(kept; the rest not read\)\n$`, r.stdout)
			// Sealed: the checksum is current and matches.
			require.Equal(t, "f.bloom: ok\n", bk(t, dir, "", "verify", "f.bloom").ok(t))
			// The command has read all but what the pipe and its
			// buffers hold (under 1 MiB): the first 2 MiB of keys were
			// added before the signal, and are kept.
			allPresent(t, dir, "f.bloom", keys[:strings.LastIndexByte(keys[:2<<20], '\n')+1])
			require.Equal(t, []string{"f.bloom"}, dirNames(t, dir))
		}
	})
	t.Run("build", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "old.txt"), keyLines("old", 3000))
		bk(t, dir, "", "build", "-o", "wl.bloom", "old.txt").ok(t)
		p := startBK(t, dir, true, nil, "build", "-n", "1e6", "-o", "wl.bloom")
		_, err := io.WriteString(p.stdin, bigKeys("k", 4<<20))
		require.NoError(t, err)
		p.signal(t, syscall.SIGTERM)
		p.wait(t, 20*time.Second).interruptedBy(t, syscall.SIGTERM, "SIGTERM")
		p.stdin.Close()
		require.Equal(t, []string{"old.txt", "wl.bloom"}, dirNames(t, dir))
		allPresent(t, dir, "wl.bloom", keyLines("old", 3000))
	})
	t.Run("union", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "old.txt"), keyLines("old", 3000))
		bk(t, dir, "", "build", "-n", "1e7", "-o", "u.bloom", "old.txt").ok(t)
		bk(t, dir, "", "create", "-n", "1e7", "a.bloom").ok(t)
		args := []string{"union", "-o", "u.bloom"}
		for i := 0; i < 100; i++ { // 100 merges of 12 MB: long enough to be stopped
			args = append(args, "a.bloom")
		}
		p := startBK(t, dir, false, nil, args...)
		waitForEntry(t, dir, ".u.bloom.tmp-", 10*time.Second)
		p.signal(t, syscall.SIGINT)
		p.wait(t, 20*time.Second).interruptedBy(t, syscall.SIGINT, "SIGINT")
		require.Equal(t, []string{"a.bloom", "old.txt", "u.bloom"}, dirNames(t, dir), "no temporary file left")
		allPresent(t, dir, "u.bloom", keyLines("old", 3000))
	})
}

// TestScalableFullDisk: a scalable filter whose growth hit ENOSPC during
// `bloomkit add` exited 0 without a word, and kept filling its last stage
// far past its rate. add and dedup now exit 2 with the reason, and the
// filter file is sealed with the keys added before. The test runs itself
// again in a private mount namespace with a 2 MiB tmpfs (a real ENOSPC);
// where namespaces are forbidden, the child lowers RLIMIT_FSIZE instead
// (EFBIG).
func TestScalableFullDisk(t *testing.T) {
	skipUnderRace(t) // its child builds through the built binary
	if os.Getenv("BLOOMKIT_CLI_FULLDISK") != "" {
		scalableFullDiskChild(t)
		return
	}
	dir := t.TempDir()
	run := func(mode string, attr *syscall.SysProcAttr) ([]byte, error) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestScalableFullDisk$", "-test.v")
		cmd.Env = append(os.Environ(), "BLOOMKIT_CLI_FULLDISK="+mode, "BLOOMKIT_CLI_FULLDISK_DIR="+dir,
			"BLOOMKIT_CLI_BIN="+bloomkitBin)
		cmd.SysProcAttr = attr
		return cmd.CombinedOutput()
	}
	out, err := run("tmpfs", &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	})
	if err != nil && len(out) == 0 {
		t.Logf("no user namespaces here (%v): using RLIMIT_FSIZE", err)
		out, err = run("rlimit", nil)
	}
	t.Logf("child:\n%s", out)
	require.NoError(t, err)
	require.Contains(t, string(out), "FULLDISK-OK")
}

func scalableFullDiskChild(t *testing.T) {
	dir := os.Getenv("BLOOMKIT_CLI_FULLDISK_DIR")
	reason := "file too large"
	switch os.Getenv("BLOOMKIT_CLI_FULLDISK") {
	case "tmpfs":
		require.NoError(t, syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=2m"))
		reason = "no space left on device"
	case "rlimit":
		require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: 2 << 20, Max: 2 << 20}))
	}
	// Stages of 1000, 2000, 4000 ... keys: the one after 1.1 MB of
	// filter does not fit.
	keys := bigKeys("k", 8<<20)
	bk(t, dir, "", "create", "-variant", "scalable", "-n", "1000", "s.bloom").ok(t)
	bk(t, dir, keys, "add", "s.bloom").fails(t, "s.bloom", "growth", reason)
	require.Equal(t, "s.bloom: ok\n", bk(t, dir, "", "verify", "s.bloom").ok(t), "sealed after the failure")
	require.NoError(t, os.Remove(filepath.Join(dir, "s.bloom")))

	r := bk(t, dir, keys, "dedup", "-variant", "scalable", "-n", "1000", "-state", "d.bloom")
	r.fails(t, "d.bloom", "growth", reason)
	require.Equal(t, "d.bloom: ok\n", bk(t, dir, "", "verify", "d.bloom").ok(t))
	os.Stdout.WriteString("FULLDISK-OK\n")
}

// TestDamagedFileIsNeverAnsweredSilently: `bloomkit test` on a file whose
// payload was damaged answered absent for keys that were added, exit 0, and
// info said the checksum was current. test and info now check files up to
// 64 MiB against their checksum first; a larger file gets a warning unless
// -verify (check it) or -no-verify (the operator's choice) is given, and so
// does a file whose checksum is not current.
func TestDamagedFileIsNeverAnsweredSilently(t *testing.T) {
	dir := t.TempDir()
	keys := keyLines("k", 10000)
	writeFile(t, filepath.Join(dir, "keys.txt"), keys)
	bk(t, dir, "", "build", "-o", "good.bloom", "keys.txt").ok(t)
	b, err := os.ReadFile(filepath.Join(dir, "good.bloom"))
	require.NoError(t, err)
	for i := 4096; i < len(b); i++ { // the payload zeroed: most keys absent
		b[i] = 0
	}
	writeFile(t, filepath.Join(dir, "bad.bloom"), string(b))

	r := bk(t, dir, keys, "test", "bad.bloom")
	r.fails(t, "bad.bloom", "payload checksum mismatch", "damaged")
	require.Empty(t, r.stdout, "no answer from a damaged file")
	bk(t, dir, "", "test", "-q", "bad.bloom", "k1").fails(t, "bad.bloom", "damaged")
	bk(t, dir, "", "test", "-verify", "bad.bloom", "k1").fails(t, "bad.bloom", "damaged")
	// The operator may still ask the damaged file.
	r = bk(t, dir, "", "test", "-no-verify", "bad.bloom", "k1")
	require.Equal(t, "k1\tabsent\n", r.stdout)
	require.Empty(t, r.stderr)

	r = bk(t, dir, "", "info", "bad.bloom")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stdout, "checksum       DAMAGED")
	require.NotContains(t, r.stdout, "current")
	require.Contains(t, r.stderr, "payload checksum mismatch")
	require.Contains(t, bk(t, dir, "", "info", "good.bloom").ok(t), "checksum       current, and the payload matches it (checked now)")
	require.Contains(t, bk(t, dir, "", "info", "-no-verify", "bad.bloom").ok(t), "payload not checked (-no-verify)")

	// Over 64 MiB: answered with a warning, unless -verify or -no-verify.
	bk(t, dir, "", "create", "-n", "6e7", "big.bloom").ok(t)
	r = bk(t, dir, "", "test", "big.bloom", "k1")
	require.Equal(t, 1, r.code)
	require.Equal(t, "k1\tabsent\n", r.stdout)
	require.Contains(t, r.stderr, "big.bloom: larger than 64 MiB, not checked against its checksum")
	r = bk(t, dir, "", "test", "-verify", "big.bloom", "k1")
	require.Equal(t, 1, r.code)
	require.Empty(t, r.stderr)
	r = bk(t, dir, "", "test", "-no-verify", "big.bloom", "k1")
	require.Equal(t, 1, r.code)
	require.Empty(t, r.stderr)
	require.Contains(t, bk(t, dir, "", "info", "big.bloom").ok(t), "payload not checked: larger than 64 MiB")
	require.Contains(t, bk(t, dir, "", "info", "-verify", "big.bloom").ok(t), "payload matches it (checked now)")

	// A file left open for writing by a killed writer: its checksum is not
	// current, so the answers carry a warning; -verify refuses them.
	bk(t, dir, "", "create", "-n", "1e5", "open.bloom").ok(t)
	p := startBK(t, dir, true, nil, "add", "open.bloom")
	_, err = io.WriteString(p.stdin, bigKeys("k", 1<<20))
	require.NoError(t, err)
	require.NoError(t, p.cmd.Process.Kill())
	p.wait(t, 20*time.Second)
	p.stdin.Close()
	r = bk(t, dir, "", "test", "open.bloom", "k00000001")
	require.Equal(t, "k00000001\tpresent\n", r.stdout)
	require.Contains(t, r.stderr, "open.bloom: checksum not current")
	bk(t, dir, "", "test", "-verify", "open.bloom", "k00000001").fails(t, "open.bloom", "not current")
	require.Contains(t, bk(t, dir, "", "info", "open.bloom").ok(t), "checksum       not current")
}
