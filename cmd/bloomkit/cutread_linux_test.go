package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// readOffset is the offset of the descriptor of process pid open on path
// (from /proc/PID/fdinfo), or -1 while it has none.
func readOffset(pid int, path string) int64 {
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return -1
	}
	for _, e := range fds {
		target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, e.Name()))
		if err != nil || target != path {
			continue
		}
		info, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%s", pid, e.Name()))
		if err != nil {
			return -1
		}
		for _, l := range strings.Split(string(info), "\n") {
			if v, ok := strings.CutPrefix(l, "pos:"); ok {
				pos, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				return pos
			}
		}
	}
	return -1
}

// TestOnePassReadOfFileCutWhileRead replays issue 36 row 20: a one-pass
// read (build -variant fuse, add, test) of a key file that its writer cut
// mid-line while bloomkit read it exited 0 and took the cut line as a key.
// Each command here reads a 32 MiB key file; once it has read some of it
// (its descriptor's offset in /proc/PID/fdinfo), the file is truncated in
// the middle of a line ahead of that offset, so the command reads up to the
// cut and finds the end of the file there. It must exit 2 naming the file
// as changed while read, and publish no fuse filter. A file that simply
// ends without a newline is still a normal input (TestNoFinalNewline...).
func TestOnePassReadOfFileCutWhileRead(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"build", "-variant", "fuse", "-o", "fuse.bloom"},
		{"add", "std.bloom", "-f"},
		{"test", "std.bloom", "-f"},
	} {
		t.Run(args[0], func(t *testing.T) {
			dir := t.TempDir()
			bk(t, dir, "", "create", "-n", "5e6", "std.bloom").ok(t)
			keys := filepath.Join(dir, "keys.txt")
			content := bigKeys("k", 32<<20)
			var p *proc
			for try := 0; ; try++ {
				writeFile(t, keys, content)
				p = startBK(t, dir, false, nil, append(args, keys)...)
				var pos int64 = -1
				waitFor(t, 30*time.Second, "the command to start reading", func() bool {
					pos = readOffset(p.cmd.Process.Pid, keys)
					return pos > 0
				})
				// Cut in the middle of a line, halfway between what was
				// read and the end.
				cut := pos + (int64(len(content))-pos)/2
				for content[cut-1] == '\n' || content[cut] == '\n' {
					cut++
				}
				require.NoError(t, os.Truncate(keys, cut))
				r := p.wait(t, 60*time.Second)
				if r.code == 0 && try < 5 {
					// It may have read to the end before the cut (the
					// offset runs ahead of the keys taken): again.
					t.Logf("try %d: exit 0 (read all before the cut at %d)", try, cut)
					continue
				}
				r.fails(t, "keys.txt", "changed while it was read")
				break
			}
			_, err := os.Stat(filepath.Join(dir, "fuse.bloom"))
			require.ErrorIs(t, err, os.ErrNotExist, "no fuse filter published")
		})
	}
}
