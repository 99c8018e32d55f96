package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// readmeLine returns the one line of the README that begins with prefix
// (after indentation): the recipes below run the README's own commands.
func readmeLine(t *testing.T, prefix string) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	var found []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), prefix) {
			found = append(found, strings.TrimSpace(l))
		}
	}
	require.Len(t, found, 1, "README lines beginning %q", prefix)
	return found[0]
}

// shellWords splits a README command line into its words: plain words,
// and a double-quoted one; a comment ends it.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	if i := strings.Index(line, " #"); i >= 0 {
		line = line[:i]
	}
	var words []string
	for line = strings.TrimSpace(line); line != ""; line = strings.TrimSpace(line) {
		if line[0] == '"' {
			end := strings.IndexByte(line[1:], '"')
			require.GreaterOrEqual(t, end, 0, "unterminated quote in %q", line)
			words = append(words, line[1:1+end])
			line = line[2+end:]
			continue
		}
		w, rest, _ := strings.Cut(line, " ")
		words = append(words, w)
		line = rest
	}
	return words
}

// readmeRedisCLI runs a README redis-cli line against addr: with redis-cli when
// it is installed (as the user ran it), else the same words through
// go-redis. It returns the reply as redis-cli prints it to a pipe.
func readmeRedisCLI(t *testing.T, addr, line string, vars map[string]string) string {
	t.Helper()
	words := shellWords(t, line)
	require.Equal(t, "redis-cli", words[0], line)
	words = words[1:]
	for len(words) >= 2 && strings.HasPrefix(words[0], "-") { // -p 6379: our own address instead
		words = words[2:]
	}
	for i, w := range words {
		if v, ok := vars[w]; ok {
			words[i] = v
		}
	}
	host, port, _ := strings.Cut(addr, ":")
	if path, err := exec.LookPath("redis-cli"); err == nil {
		out, err := exec.Command(path, append([]string{"-h", host, "-p", port}, words...)...).CombinedOutput()
		require.NoError(t, err, "%s", out)
		return strings.TrimSpace(string(out))
	}
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2})
	defer c.Close()
	args := make([]any, len(words))
	for i, w := range words {
		args[i] = w
	}
	v, err := c.Do(context.Background(), args...).Result()
	if err != nil {
		return err.Error()
	}
	switch v := v.(type) {
	case int64:
		return strconv.FormatInt(v, 10)
	default:
		return fmt.Sprint(v)
	}
}

// TestReadmeWhitelistTakesBFAdd replays issue 42 row 5 with the README's
// own commands: the nightly build (no -n: sized to the distinct keys,
// full from the start) into the served folder, `bloomkit serve -dir`, and
// the README's `redis-cli BF.ADD whitelist late-signup@example.com`.
// Before, the add got "ERR non scaling filter is full" while `bloomkit
// add` on the same file only warned. Now a built file takes adds past its
// capacity (one warning in the server's log); only a key reserved
// NONSCALING refuses them, after a restart too.
func TestReadmeWhitelistTakesBFAdd(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	srv, data := filepath.Join(root, "srv"), filepath.Join(root, "data")
	require.NoError(t, os.Mkdir(srv, 0o755))
	require.NoError(t, os.Mkdir(data, 0o755))
	keys := make([]string, 100_000)
	for i := range keys {
		keys[i] = strconv.Itoa(i + 1)
	}
	gzLines(t, filepath.Join(data, "export-"+time.Now().Format("2006-01-02")+".txt.gz"), keys)

	build := readmeLine(t, "bloomkit build -p 1e-4 -o /srv/whitelist.bloom")
	build = strings.NewReplacer("/srv/", srv+"/", "/data/", data+"/").Replace(build)
	sh := exec.Command("sh", "-c", build)
	sh.Env = append(os.Environ(), "PATH="+filepath.Dir(bloomkitBin)+":"+os.Getenv("PATH"))
	out, err := sh.CombinedOutput()
	require.NoError(t, err, "%s: %s", build, out)

	require.Equal(t, "bloomkit serve -dir /srv -addr 127.0.0.1:6379 &", readmeLine(t, "bloomkit serve -dir /srv"))
	p := startServe(t, bkCommand(t, "serve", "-dir", srv, "-addr", "127.0.0.1:0"))
	add := readmeLine(t, "Clients may `BF.ADD` to a served whitelist")
	add = add[strings.Index(add, "(`")+2 : strings.Index(add, "`)")]
	require.Equal(t, "1", readmeRedisCLI(t, p.addr, add, nil), add)
	require.Equal(t, "1", readmeRedisCLI(t, p.addr, "redis-cli BF.EXISTS whitelist late-signup@example.com", nil))
	require.Equal(t, "1", readmeRedisCLI(t, p.addr, "redis-cli BF.EXISTS whitelist 77777", nil), "the built keys are there")
	require.Eventually(t, func() bool {
		return strings.Contains(p.logs(), "takes adds past it")
	}, 5*time.Second, 10*time.Millisecond, "one warning that the rate rises")

	// A key reserved NONSCALING refuses past its capacity, as RedisBloom's,
	// and still does after a restart (its file says so).
	require.Equal(t, "OK", readmeRedisCLI(t, p.addr, "redis-cli BF.RESERVE strict 0.01 100 NONSCALING", nil))
	for i := range 100 {
		require.Equal(t, "1", readmeRedisCLI(t, p.addr, fmt.Sprintf("redis-cli BF.ADD strict s%d", i), nil))
	}
	require.Contains(t, readmeRedisCLI(t, p.addr, "redis-cli BF.ADD strict one-more", nil), "non scaling filter is full")
	p.stop(t)
	p = startServe(t, bkCommand(t, "serve", "-dir", srv, "-addr", "127.0.0.1:0"))
	require.Contains(t, readmeRedisCLI(t, p.addr, "redis-cli BF.ADD strict one-more", nil), "non scaling filter is full")
	require.Equal(t, "1", readmeRedisCLI(t, p.addr, "redis-cli BF.EXISTS whitelist late-signup@example.com", nil))
	p.stop(t)

	// The tool applies the same rule to the same files.
	r := bk(t, srv, "cli-new\n", "add", "strict.bloom")
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, "capacity")
	require.Contains(t, bk(t, srv, "", "info", "strict.bloom").stdout, "new keys refused")
	r = bk(t, srv, "cli-new\n", "add", "whitelist.bloom")
	require.Zero(t, r.code, r.stderr)
	require.Contains(t, r.stderr, "more keys than its capacity")
}

// stop sends SIGTERM (the server checkpoints its written keys) and waits
// for the process to exit.
func (p *serveProc) stop(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		require.NoError(t, err, "%s", p.logs())
	case <-time.After(30 * time.Second):
		t.Fatalf("the server did not stop in 30 s: %s", p.logs())
	}
}

// TestReadmeCrawlerReserves replays issue 42 row 6 (the server's half)
// with the README's crawler commands: the key reserved at a rate for a
// crawler, then BF.ADD of 10^6 URLs, each fetched on reply 1. New URLs
// answered 0 ("seen") are never fetched: at the README's 1e-6 the
// expected count is at most 10^6 × 1e-6 = 1 (the rate at each fill is
// below the target), and 8 is a bound a Poisson(1) exceeds with
// probability below 1e-5. The same URLs into a key nobody reserved
// (RedisBloom's defaults, capacity 100 at 1%) are measured beside, for
// the README's figure.
func TestReadmeCrawlerReserves(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := startServe(t, bkCommand(t, "serve", "-dir", dir, "-addr", "127.0.0.1:0"))
	reserve := readmeLine(t, "redis-cli BF.RESERVE seen ")
	require.Equal(t, "OK", readmeRedisCLI(t, p.addr, reserve, nil), reserve)
	add := readmeLine(t, "redis-cli BF.ADD seen ")
	require.Equal(t, "1", readmeRedisCLI(t, p.addr, add, map[string]string{"$url": "https://example.com/"}), add)
	addWords := shellWords(t, add)[1:3] // BF.ADD seen

	c := redis.NewClient(&redis.Options{Addr: p.addr, PoolSize: 1})
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	seenNew := func(key string) int {
		lost := 0
		for b := 0; b < 1000; b++ {
			cmds, err := c.Pipelined(ctx, func(pp redis.Pipeliner) error {
				for i := range 1000 {
					pp.Do(ctx, addWords[0], key, fmt.Sprintf("https://site-%d.example/page/%d", b, i))
				}
				return nil
			})
			require.NoError(t, err)
			for _, cmd := range cmds {
				v, err := cmd.(*redis.Cmd).Result()
				require.NoError(t, err)
				if v == int64(0) || v == false { // RESP2, RESP3
					lost++
				}
			}
		}
		return lost
	}
	reserved := seenNew(addWords[1])
	unreserved := seenNew("unreserved")
	t.Logf("of 10^6 new URLs, answered 0 (never fetched): %d reserved as the README says, %d on a key nobody reserved", reserved, unreserved)
	require.LessOrEqual(t, reserved, 8)
}
