package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/mmapstore"
)

// gzLines writes lines to path gzipped (a nightly export).
func gzLines(t *testing.T, path string, lines []string) {
	t.Helper()
	var b bytes.Buffer
	z := gzip.NewWriter(&b)
	_, err := z.Write([]byte(strings.Join(lines, "\n") + "\n"))
	require.NoError(t, err)
	require.NoError(t, z.Close())
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
}

// serveDir starts the built `bloomkit serve -dir dir` and returns a client;
// the server gets SIGTERM (exit 0 wanted) when the test ends.
func serveDir(t *testing.T, dir string) (*redis.Client, string, *bytes.Buffer) {
	t.Helper()
	addr := freePort(t)
	cmd := bkCommand(t, "serve", "-dir", dir, "-addr", addr)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	t.Cleanup(func() {
		c.Close()
		cmd.Process.Signal(syscall.SIGTERM)
		if err := waitCmd(t, cmd, 30*time.Second, &stderr); err != nil {
			t.Errorf("serve after SIGTERM: %v\n%s", err, stderr.String())
		}
	})
	require.Eventually(t, func() bool { return c.Ping(context.Background()).Err() == nil }, 10*time.Second, 10*time.Millisecond)
	return c, addr, &stderr
}

// redisCLI runs redis-cli against addr, as the operator did.
func redisCLI(t *testing.T, addr string, args ...string) string {
	t.Helper()
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Skip("redis-cli is not installed")
	}
	host, port, _ := net.SplitHostPort(addr)
	out, err := exec.Command(cli, append([]string{"-h", host, "-p", port}, args...)...).CombinedOutput()
	require.NoError(t, err, string(out))
	return strings.TrimSpace(string(out))
}

// TestNightlyBuildOverWrittenKey replays issue 31's nightly whitelist
// (issue 36 row 5): `bloomkit build -o DIR/whitelist.bloom export.txt.gz`,
// `bloomkit serve -dir DIR`, `redis-cli BF.ADD whitelist
// late-signup@example.com`, then the next night's `bloomkit build -o
// DIR/whitelist.bloom export2.txt.gz`: it exits 0 within 10 s (the old
// server held its writer lock, and the build waited 5 s and exited 2), the
// keys of the new build answer 1, and so does the day's add. The second
// form is row 5 as filed: a BF.ADD the server refused (a full fixed
// filter, nothing added) used to lock the key against every later build.
func TestNightlyBuildOverWrittenKey(t *testing.T) {
	t.Parallel() // waits on child processes: runs beside the others that do (TestMain)
	for _, refused := range []bool{false, true} {
		t.Run(fmt.Sprintf("refused=%v", refused), func(t *testing.T) {
			dir, src := t.TempDir(), t.TempDir()
			day1, day2 := make([]string, 2000), make([]string, 2000)
			for i := range day1 {
				day1[i] = fmt.Sprintf("user-%d@example.com", i)
				day2[i] = fmt.Sprintf("user-%d@example.com", i+1000)
			}
			gzLines(t, filepath.Join(src, "export.txt.gz"), day1)
			gzLines(t, filepath.Join(src, "export2.txt.gz"), day2)
			wl := filepath.Join(dir, "whitelist.bloom")
			args := []string{"build", "-o", wl}
			if refused {
				args = append(args, "-variant", "partitioned", "-n", "1900") // 2000 keys: full
			}
			r := bk(t, src, "", append(args, "export.txt.gz")...)
			require.Zero(t, r.code, r.stderr)
			if refused {
				// As a key reserved NONSCALING is: a built file takes
				// adds past its capacity (issue 42 row 5).
				require.NoError(t, mmapstore.MarkFullRefuses(wl))
			}

			c, addr, logs := serveDir(t, dir)
			ctx := context.Background()
			if refused {
				require.Contains(t, redisCLI(t, addr, "BF.ADD", "whitelist", "late-signup@example.com"), "ERR non scaling filter is full")
			} else {
				require.Equal(t, "1", redisCLI(t, addr, "BF.ADD", "whitelist", "late-signup@example.com"))
			}

			begin := time.Now()
			r = bk(t, src, "", append(args, "export2.txt.gz")...)
			took := time.Since(begin)
			require.Zero(t, r.code, "the nightly build over a written key must land: %s", r.stderr)
			require.Less(t, took, 10*time.Second)

			require.Eventually(t, func() bool { return c.BFExists(ctx, "whitelist", "user-2999@example.com").Val() },
				10*time.Second, 10*time.Millisecond, "the new build is not served\n%s", logs)
			found, err := c.BFMExists(ctx, "whitelist", anys(day2)...).Result()
			require.NoError(t, err)
			for i, ok := range found {
				require.True(t, ok, "key %s of the new build answers 0", day2[i])
			}
			if !refused {
				require.True(t, c.BFExists(ctx, "whitelist", "late-signup@example.com").Val(), "the day's add was lost")
				require.Contains(t, logs.String(), "replayed=1")
				// Adds go on, into the new file.
				require.Equal(t, "1", redisCLI(t, addr, "BF.ADD", "whitelist", "after-publish@example.com"))
			}
			t.Logf("build -o over the written key: %v", took)
		})
	}
}

func anys(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
