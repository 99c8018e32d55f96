package serve

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The RedisBloom module the comparison runs against: $BLOOMKIT_REDISBLOOM
// (a built .so), else one built by ../shared/redisbloom/build.sh next to the
// repository and cached in the user cache folder.
func redisBloomModule(t *testing.T) string {
	if p := os.Getenv("BLOOMKIT_REDISBLOOM"); p != "" {
		return p
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	so := filepath.Join(cache, "bloomkit", "redisbloom-v2.6.28.so")
	if _, err := os.Stat(so); err == nil {
		return so
	}
	script := findBuildScript()
	if script == "" {
		t.Skip("RedisBloom comparison skipped: no ../shared/redisbloom/build.sh beside the repository and BLOOMKIT_REDISBLOOM unset")
	}
	if testing.Short() {
		t.Skipf("RedisBloom comparison skipped under -short: it is not built yet (run without -short to build it with %s, about a minute)", script)
	}
	os.MkdirAll(filepath.Dir(so), 0o755)
	out, err := exec.Command("bash", script, so).CombinedOutput()
	if err != nil {
		t.Fatalf("building RedisBloom with %s: %v\n%s", script, err, out)
	}
	return so
}

// findBuildScript looks for shared/redisbloom/build.sh beside the folders
// that hold the repository (the checkout, or the parents of a worktree).
func findBuildScript() string {
	dir, _ := os.Getwd()
	for ; dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		p := filepath.Join(dir, "shared", "redisbloom", "build.sh")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// startRedisBloom runs redis-server with the module on a free loopback port.
func startRedisBloom(t *testing.T) string {
	so := redisBloomModule(t)
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("RedisBloom comparison skipped: no redis-server on PATH (apt-get install redis-server)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", t.TempDir(), "--loadmodule", so)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return addr
		}
		if i == 100 {
			t.Fatal(errors.New("redis-server did not start"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// compareScript is the command sequence sent to both servers. A line
// that ends in "#differs" is expected to differ (listed in docs/serve.md).
var compareScript = `
BF.RESERVE a 0.01 1000
BF.RESERVE a 0.01 1000
BF.RESERVE b 2 10
BF.RESERVE b 0 10
BF.RESERVE b x 10
BF.RESERVE b 0.01 0
BF.RESERVE b 0.01 x
BF.RESERVE b 0.01 10 EXPANSION
BF.RESERVE b 0.01 10 EXPANSION 0
BF.RESERVE b 0.01 10 EXPANSION x
BF.RESERVE b 0.01 10 NONSCALING EXPANSION 2
BF.RESERVE b 0.01
BF.RESERVE huge 1e-9 1000000000000000 #differs
BF.ADD a x
BF.ADD a x
BF.ADD a
BF.MADD a x y z
BF.MADD a
BF.EXISTS a x
BF.EXISTS a nope
BF.EXISTS nokey x
BF.EXISTS a
BF.MEXISTS a x nope y
BF.MEXISTS nokey x y
BF.CARD a
BF.CARD nokey
BF.INFO a capacity
BF.INFO a items
BF.INFO a filters
BF.INFO a expansion
BF.INFO a bogus
BF.INFO a size #differs
BF.INFO nokey
BF.INSERT c CAPACITY 2 ERROR 0.01 NONSCALING ITEMS p q r s
BF.INFO c expansion
BF.INFO c items
BF.ADD c t
BF.EXISTS c p
BF.INSERT d NOCREATE ITEMS a
BF.INSERT d CAPACITY x ITEMS a
BF.INSERT d ERROR x ITEMS a
BF.INSERT d EXPANSION x ITEMS a
BF.INSERT d BOGUS ITEMS a
BF.INSERT d ITEMS
BF.INSERT d CAPACITY
BF.INSERT d CAPACITY 0 ITEMS a
BF.INSERT d ERROR 2 ITEMS a
BF.INSERT e CAPACITY 10 EXPANSION 3 ITEMS a b
BF.INFO e expansion
BF.INFO e capacity
BF.ADD auto k
BF.INSERT g CAPACITY 2 ITEMS alpha beta gamma delta epsilon
BF.INFO g capacity #differs
BF.INFO g filters #differs
BF.INFO g items
BF.CARD g
BF.MADD f2 a
BF.INSERT f3 CAPACITY 3 NONSCALING ITEMS one two
BF.MADD f3 two three four five
BF.CARD f3
BF.INFO auto capacity
BF.INFO auto expansion
PING
PING hi
PING a b
ECHO hi
ECHO
SELECT 0
SELECT x
TYPE a
TYPE nokey
EXISTS a c nokey
DEL c nokey
EXISTS c
FOO bar baz
CLIENT SETNAME me
CLIENT GETNAME
CLIENT BOGUS
AUTH x
HELLO 2 #differs
MULTI
BF.ADD m x
BF.ADD m
BF.EXISTS m x
EXEC
EXEC
DISCARD
MULTI
MULTI
BF.ADD m y
FOO
EXEC
MULTI
TYPE
EXEC
BF.EXISTS m y
MULTI
DISCARD
UNWATCH
WATCH m #differs
RENAME nokey x
RENAME m m2
RENAME m2 m2
RENAMENX m2 a
RENAMENX m2 m2
BF.EXISTS m2 x
EXISTS m
RENAMENX m2 m3
RENAME m3
EXPIRE nokey 10
EXPIRE m3 x
EXPIRE m3
EXPIRE m3 100
TTL m3
EXPIRE m3 50 NX
EXPIRE m3 200 GT
TTL m3
PERSIST m3
PERSIST m3
TTL m3
TTL nokey
PTTL nokey
PTTL m3
EXPIREAT m3 1
EXISTS m3
MEMORY USAGE nokey
MEMORY USAGE
MEMORY FOO
MEMORY USAGE a #differs
CLIENT KILL ID 999999
CLIENT KILL 1.2.3.4:5
CLIENT KILL ADDR 1.2.3.4:5
FLUSHALL BOGUS
MODULE LIST #differs
`

// compareScript3 is sent after HELLO 3 on a second connection to each
// server; the replies (RESP3: booleans, maps, null) are compared byte for
// byte.
var compareScript3 = `
HELLO 3 #differs
BF.ADD r3 a
BF.ADD r3 a
BF.MADD r3 a b
BF.MADD r3
BF.EXISTS r3 a
BF.EXISTS r3 zz
BF.EXISTS nokey a
BF.MEXISTS r3 a zz
BF.MEXISTS nokey a
BF.INSERT r3f CAPACITY 1 NONSCALING ITEMS a b
BF.INSERT r3 ITEMS c d
BF.INFO r3f expansion
BF.INFO r3 capacity
BF.INFO r3 items
BF.INFO r3 filters
BF.INFO r3 expansion
BF.INFO r3 bogus
BF.INFO r3 size #differs
BF.INFO r3 #differs
BF.INFO nokey
BF.CARD r3
BF.CARD nokey
BF.RESERVE r3 0.01 100
CLIENT GETNAME
CLIENT SETNAME three
CLIENT GETNAME
CONFIG GET save
CONFIG GET nothing
MEMORY USAGE nokey
MULTI
BF.ADD r3 e
BF.INFO r3 items
BF.EXISTS r3 e
EXEC
TTL nokey
TYPE r3
EXISTS r3 nokey
PING
ECHO hi
MODULE LIST #differs
HELLO 2 #differs
BF.EXISTS r3 a
`

// TestCompareRedisBloom sends compareScript to RedisBloom and to the
// server and compares the replies.
func TestCompareRedisBloom(t *testing.T) {
	rbAddr := startRedisBloom(t)
	ts := start(t, cfgWith(nil))
	rb, bk := dialRaw(t, rbAddr), dialRaw(t, ts.addr)
	var same, differ int
	for _, line := range strings.Split(strings.TrimSpace(compareScript), "\n") {
		expectDiff := strings.HasSuffix(line, "#differs")
		args := strings.Fields(strings.TrimSuffix(line, "#differs"))
		want, got := rb.do(args...), bk.do(args...)
		switch {
		case want == got && !expectDiff:
			same++
		case want != got && expectDiff:
			differ++
			t.Logf("differs as documented: %s\n  RedisBloom: %s\n  bloomkit:   %s", line, want, got)
		default:
			t.Errorf("%s\n  RedisBloom: %q\n  bloomkit:   %q", line, want, got)
		}
	}
	rb3, bk3 := dialRaw(t, rbAddr), dialRaw(t, ts.addr)
	for _, line := range strings.Split(strings.TrimSpace(compareScript3), "\n") {
		expectDiff := strings.HasSuffix(line, "#differs")
		args := strings.Fields(strings.TrimSuffix(line, "#differs"))
		want, got := rb3.doRaw(args...), bk3.doRaw(args...)
		switch {
		case want == got && !expectDiff:
			same++
		case want != got && expectDiff:
			differ++
			t.Logf("differs as documented (RESP3): %s\n  RedisBloom: %q\n  bloomkit:   %q", line, want, got)
		default:
			t.Errorf("RESP3: %s\n  RedisBloom: %q\n  bloomkit:   %q", line, want, got)
		}
	}
	t.Logf("%d replies identical, %d documented differences", same, differ)
}
