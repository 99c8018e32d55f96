package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestPublishIntoFolder replays the Lower row of issue 26: `publish x.bloom
// srv/` failed with "rename ... file exists". A folder receives the file
// under its own name.
func TestPublishIntoFolder(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "srv"), 0o755))
	bk(t, dir, "a\nb\n", "build", "-o", "x.bloom").ok(t)
	bk(t, dir, "", "publish", "x.bloom", "srv/").ok(t)
	bk(t, dir, "", "publish", "x.bloom", "srv").ok(t)
	require.Equal(t, []string{"x.bloom"}, dirNames(t, filepath.Join(dir, "srv")))
	require.Equal(t, "a\tpresent\n", bk(t, dir, "", "test", "srv/x.bloom", "a").ok(t))
}

// TestPublishOtherVariantIsRefused replays the Lower row of issue 26: a
// filter of another variant published over a served path was accepted,
// and every reload of the server then failed. It is refused unless -force.
func TestPublishOtherVariantIsRefused(t *testing.T) {
	dir := t.TempDir()
	bk(t, dir, "a\n", "build", "-variant", "partitioned", "-o", "served.bloom").ok(t)
	bk(t, dir, "b\n", "build", "-o", "std.bloom").ok(t)
	bk(t, dir, "", "publish", "std.bloom", "served.bloom").fails(t, "std.bloom is a standard filter", "served.bloom a partitioned one", "-force")
	require.Equal(t, "a\tpresent\n", bk(t, dir, "", "test", "served.bloom", "a").ok(t), "left as it was")
	require.Equal(t, []string{"served.bloom", "std.bloom"}, dirNames(t, dir))
	bk(t, dir, "", "publish", "-force", "std.bloom", "served.bloom").ok(t)
	require.Contains(t, bk(t, dir, "", "info", "served.bloom").ok(t), "variant        standard")
}

// TestPublishInterrupted replays issue 26 row 8 for publish: Ctrl-C while
// it copied left a .DST.tmp-* beside the served file (572 MB there). Now
// SIGINT, and a second one right after as timeout sends it, stop it with
// status 130, remove the temporary copy and leave DST as it was.
func TestPublishInterrupted(t *testing.T) {
	dir := t.TempDir()
	bk(t, dir, "", "create", "-n", "1e8", "big.bloom").ok(t) // 120 MB to copy
	bk(t, dir, "old\n", "build", "-n", "1e8", "-o", "served.bloom").ok(t)
	for _, twice := range []bool{false, true} {
		p := startBK(t, dir, false, nil, "publish", "big.bloom", "served.bloom")
		waitForEntry(t, dir, ".served.bloom.tmp-", 20*time.Second)
		p.signal(t, syscall.SIGINT)
		if twice {
			p.signal(t, syscall.SIGINT)
		}
		r := p.wait(t, 30*time.Second)
		require.Equal(t, 130, r.code, "stderr: %s", r.stderr)
		require.Contains(t, r.stderr, "bloomkit publish: interrupted by SIGINT")
		require.Equal(t, []string{"big.bloom", "served.bloom"}, dirNames(t, dir), "no temporary copy left")
		require.Equal(t, "old\tpresent\n", bk(t, dir, "", "test", "-no-verify", "served.bloom", "old").ok(t))
	}
}

// TestBuildOverOtherVariantIsRefused replays issue 36 row 6: `bloomkit
// build -variant fuse -o DIR/allow.bloom` over a served standard filter
// exited 0 without -force, unlike publish, and the server then refused the
// new file and kept answering from the old one. build -o and union -o now
// refuse a target of another variant as publish does, before reading any
// input, and -force replaces it.
func TestBuildOverOtherVariantIsRefused(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "srv"), 0o755))
	bk(t, dir, "old\n", "build", "-o", "srv/allow.bloom").ok(t)
	bk(t, dir, "new\n", "build", "-variant", "fuse", "-o", "srv/allow.bloom").fails(t,
		"the build is a fuse filter", "srv/allow.bloom a standard one", "-force")
	bk(t, dir, "new\n", "build", "-variant", "partitioned", "-n", "10", "-o", "srv/allow.bloom").fails(t,
		"the build is a partitioned filter", "srv/allow.bloom a standard one", "-force")
	require.Equal(t, "old\tpresent\n", bk(t, dir, "", "test", "srv/allow.bloom", "old").ok(t), "left as it was")
	require.Equal(t, []string{"allow.bloom"}, dirNames(t, filepath.Join(dir, "srv")), "nothing left beside it")

	bk(t, dir, "a\n", "build", "-variant", "partitioned", "-n", "10", "-o", "p1.bloom").ok(t)
	bk(t, dir, "b\n", "build", "-variant", "partitioned", "-n", "10", "-o", "p2.bloom").ok(t)
	bk(t, dir, "", "union", "-o", "srv/allow.bloom", "p1.bloom", "p2.bloom").fails(t,
		"the union is a partitioned filter", "srv/allow.bloom a standard one", "-force")
	require.Equal(t, "old\tpresent\n", bk(t, dir, "", "test", "srv/allow.bloom", "old").ok(t), "left as it was")

	bk(t, dir, "new\n", "build", "-force", "-variant", "fuse", "-o", "srv/allow.bloom").ok(t)
	require.Contains(t, bk(t, dir, "", "info", "srv/allow.bloom").ok(t), "variant        fuse")
	bk(t, dir, "", "union", "-force", "-o", "srv/allow.bloom", "p1.bloom", "p2.bloom").ok(t)
	require.Contains(t, bk(t, dir, "", "info", "srv/allow.bloom").ok(t), "variant        partitioned")
	bk(t, dir, "c\n", "build", "-variant", "partitioned", "-n", "10", "-o", "srv/allow.bloom").ok(t) // same variant: no -force
}
