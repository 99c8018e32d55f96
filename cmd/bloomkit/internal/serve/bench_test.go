package serve

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bloomkit/bloomkit/partitioned"
)

// benchServer serves one partitioned filter "f": n keys ("key-0" ...), n
// from $BLOOMKIT_SERVE_BENCH_N (default 1e6), or the file
// $BLOOMKIT_SERVE_BENCH_FILE (keys "1", "2", ... as `seq` writes them).
func benchServer(b testing.TB) (*testServer, int) {
	return benchServerKeys(b, func(i int) string { return "key-" + strconv.Itoa(i) })
}

// benchServerKeys is benchServer with the keys key(0), key(1), ...
func benchServerKeys(b testing.TB, key func(int) string) (*testServer, int) {
	dir := b.TempDir()
	if file := os.Getenv("BLOOMKIT_SERVE_BENCH_FILE"); file != "" {
		abs, err := filepath.Abs(file)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.Symlink(abs, filepath.Join(dir, "f.bloom")); err != nil {
			b.Fatal(err)
		}
		benchKey = func(i int) string { return strconv.Itoa(i + 1) }
		return start(b, cfgWith(func(c *Config) { c.Dir = dir })), 100_000_000
	}
	benchKey = key
	n := 1_000_000
	if v := os.Getenv("BLOOMKIT_SERVE_BENCH_N"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			b.Fatal(err)
		}
		n = int(f)
	}
	f, err := partitioned.CreateTemp(filepath.Join(dir, "f.bloom"), uint64(n), 0.01)
	if err != nil {
		b.Fatal(err)
	}
	bl := f.Builder()
	for i := range n {
		bl.Add([]byte(benchKey(i)))
	}
	bl.Flush()
	if err := f.Publish(); err != nil {
		b.Fatal(err)
	}
	return start(b, cfgWith(func(c *Config) { c.Dir = dir })), n
}

// benchKey is the i-th key the benchmark filter holds.
var benchKey func(i int) string

// pipeline sends batches of pre-encoded commands and reads the replies.
func runPipeline(b *testing.B, addr string, cmds [][]byte, depth, keysPer int) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	rd := bufio.NewReaderSize(c, 1<<16)
	var batch []byte
	b.ResetTimer()
	for i := 0; i < b.N; i += depth {
		batch = batch[:0]
		m := min(depth, b.N-i)
		for j := range m {
			batch = append(batch, cmds[(i+j)%len(cmds)]...)
		}
		if _, err := c.Write(batch); err != nil {
			b.Fatal(err)
		}
		for range m {
			if err := skipReply(rd); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N*keysPer)/b.Elapsed().Seconds(), "keys/s")
}

// skipReply reads one integer or array-of-integers reply.
func skipReply(rd *bufio.Reader) error {
	line, err := rd.ReadSlice('\n')
	if err != nil {
		return err
	}
	switch line[0] {
	case ':':
		return nil
	case '*':
		n, _ := strconv.Atoi(string(line[1 : len(line)-2]))
		for range n {
			if err := skipReply(rd); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("unexpected reply %q", line)
}

func existsCmds(n, count int) [][]byte {
	cmds := make([][]byte, count)
	for i := range cmds {
		// Half present, half absent keys.
		k := benchKey((i * 7919) % n)
		if i%2 == 1 {
			k = "absent-" + strconv.Itoa(i)
		}
		cmds[i] = []byte(encode("BF.EXISTS", "f", k))
	}
	return cmds
}

// BenchmarkExists: BF.EXISTS one at a time (depth=1) and pipelined.
func BenchmarkExists(b *testing.B) {
	ts, n := benchServer(b)
	cmds := existsCmds(n, 4096)
	for _, depth := range []int{1, 16, 100} {
		b.Run(fmt.Sprintf("depth=%d", depth), func(b *testing.B) {
			runPipeline(b, ts.addr, cmds, depth, 1)
		})
	}
}

// BenchmarkMExists: BF.MEXISTS of 100 keys per call (the batch path).
func BenchmarkMExists(b *testing.B) {
	ts, n := benchServer(b)
	cmds := make([][]byte, 64)
	for i := range cmds {
		args := []string{"BF.MEXISTS", "f"}
		for j := range 100 {
			k := benchKey(((i*100 + j) * 7919) % n)
			if j%2 == 1 {
				k = "absent-" + strconv.Itoa(i*100+j)
			}
			args = append(args, k)
		}
		cmds[i] = []byte(encode(args...))
	}
	for _, depth := range []int{1, 4} {
		b.Run(fmt.Sprintf("depth=%d", depth), func(b *testing.B) {
			runPipeline(b, ts.addr, cmds, depth, 100)
		})
	}
}

// BenchmarkRestart: a server process started over a folder that holds the
// filter file $BLOOMKIT_SERVE_BENCH_FILE (as key "f"), timed from the start
// of the process to its first answer to BF.EXISTS; reports that time and
// the process's anonymous (non-file) resident memory after 100,000
// BF.MEXISTS of 100 keys, beside the mapped file pages it holds.
func BenchmarkRestart(b *testing.B) {
	file := os.Getenv("BLOOMKIT_SERVE_BENCH_FILE")
	if file == "" {
		b.Skip("set BLOOMKIT_SERVE_BENCH_FILE to a filter file (docs/serve.md: a 1 GB one)")
	}
	dir := b.TempDir()
	abs, err := filepath.Abs(file)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.Symlink(abs, filepath.Join(dir, "f.bloom")); err != nil {
		b.Fatal(err)
	}
	var first time.Duration
	var anon, fileRSS float64
	for range b.N {
		t0 := time.Now()
		ch := startChildB(b, dir)
		r := dialRaw(b, ch.addr)
		if got := r.do("BF.EXISTS", "f", "1"); got[0] != ':' {
			b.Fatalf("first answer %q", got)
		}
		first += time.Since(t0)
		anon, fileRSS = loadAndMeasure(b, ch)
		ch.cmd.Process.Kill()
		ch.cmd.Wait()
	}
	b.ReportMetric(float64(first.Milliseconds())/float64(b.N), "ms-to-first-answer")
	b.ReportMetric(anon, "MB-rss-anon")
	b.ReportMetric(fileRSS, "MB-rss-file")
}

// loadAndMeasure sends 100,000 BF.MEXISTS of 100 random keys, then reads
// the process's RssAnon and RssFile.
func loadAndMeasure(b *testing.B, ch *child) (anon, file float64) {
	c, err := net.Dial("tcp", ch.addr)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	rd := bufio.NewReaderSize(c, 1<<16)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 100_000; i += 10 {
		var batch []byte
		for range 10 {
			args := []string{"BF.MEXISTS", "f"}
			for range 100 {
				args = append(args, strconv.Itoa(rng.IntN(200_000_000)))
			}
			batch = append(batch, encode(args...)...)
		}
		c.Write(batch)
		for range 10 {
			if err := skipReply(rd); err != nil {
				b.Fatal(err)
			}
		}
	}
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", ch.cmd.Process.Pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(st), "\n") {
		var kb float64
		if n, _ := fmt.Sscanf(line, "RssAnon: %f kB", &kb); n == 1 {
			anon = kb / 1024
		}
		if n, _ := fmt.Sscanf(line, "RssFile: %f kB", &kb); n == 1 {
			file = kb / 1024
		}
	}
	return anon, file
}

// TestLoadRedisBenchmark serves the benchmark filter (see benchServer) in
// this process and drives it with redis-benchmark (BF.EXISTS, -c 50 -P 16
// then -c 1), so that `go test -cpuprofile -memprofile` profiles the
// server alone under a real client's load. It runs only with
// BLOOMKIT_SERVE_LOAD=1 (a tool, not a check):
//
//	BLOOMKIT_SERVE_LOAD=1 BLOOMKIT_SERVE_BENCH_N=1e5 go test -run TestLoadRedisBenchmark \
//	    -cpuprofile cpu.out -memprofile mem.out -memprofilerate 512 ./cmd/bloomkit/internal/serve
func TestLoadRedisBenchmark(t *testing.T) {
	if os.Getenv("BLOOMKIT_SERVE_LOAD") == "" {
		t.Skip("a profiling tool: set BLOOMKIT_SERVE_LOAD=1")
	}
	// redis-benchmark's __rand_int__ with -r R is a 12-digit number below R:
	// the filter holds the first n of them, so that half the lookups hit.
	ts, n := benchServerKeys(t, func(i int) string { return fmt.Sprintf("%012d", i) })
	_, port, _ := net.SplitHostPort(ts.addr)
	for _, opts := range [][]string{{"-c", "50", "-P", "16", "-n", "2000000"}, {"-c", "1", "-n", "100000"}} {
		args := append([]string{"-p", port, "-q", "-r", strconv.Itoa(2 * n)}, opts...)
		args = append(args, "BF.EXISTS", "f", "__rand_int__")
		out, err := exec.Command("redis-benchmark", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("redis-benchmark: %v\n%s", err, out)
		}
		lines := strings.Split(strings.ReplaceAll(string(out), "\r", "\n"), "\n")
		for i := len(lines) - 1; i >= 0; i-- {
			if strings.TrimSpace(lines[i]) != "" {
				t.Logf("%v: %s", opts, lines[i])
				break
			}
		}
	}
}

// BenchmarkDispatch: the request path without the network (parse,
// dispatch, lookup, replies) over a recorded pipeline of 16 BF.EXISTS on
// one key, as one read; reports ns and allocations per command.
func BenchmarkDispatch(b *testing.B) {
	ts, req, cmds := dispatchRequest(b)
	c := newLoopConn(b, ts.Server)
	c.do(req)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		c.do(req)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*cmds), "ns/command")
}

// dispatchRequest is the benchmark server and the recorded pipeline of 16
// BF.EXISTS on one key of BenchmarkDispatch and BenchmarkDispatchParallel.
func dispatchRequest(b *testing.B) (ts *testServer, req []byte, cmds int) {
	ts, n := benchServer(b)
	var args [][]string
	for i := range 16 {
		args = append(args, []string{"BF.EXISTS", "f", benchKey((i * 7919) % n)})
	}
	return ts, pipeline(args...), len(args)
}

// BenchmarkDispatchParallel: BenchmarkDispatch from as many connections
// as GOMAXPROCS at once (b.RunParallel), each its own respConn as an event
// loop or a goroutine runs it: the request path's scaling with cores
// without the network and the load generator, which a 2-core machine
// cannot leave out (speed-vs-redisbloom.sh's scaling case). -cpu 1,2: ns/command
// should halve.
func BenchmarkDispatchParallel(b *testing.B) {
	ts, req, cmds := dispatchRequest(b)
	var mu sync.Mutex
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		mu.Lock()
		c := newLoopConn(b, ts.Server)
		mu.Unlock()
		for pb.Next() {
			c.do(req)
		}
	})
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*cmds), "ns/command")
}

// BenchmarkMAdd: BF.MADD of 1,000 random items a command into a reserved
// NONSCALING filter (partitioned) larger than the caches, through the
// request path without the network (as BenchmarkDispatch); reports items
// a second. BLOOMKIT_SERVE_MADD_CAP sets the capacity (default 1e7,
// 12 MB; speed-vs-redisbloom.sh's case is 1e8).
func BenchmarkMAdd(b *testing.B) {
	capacity := 10_000_000
	if v := os.Getenv("BLOOMKIT_SERVE_MADD_CAP"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			b.Fatal(err)
		}
		capacity = int(f)
	}
	ts := start(b, cfgWith(nil))
	c := newLoopConn(b, ts.Server)
	if r := string(c.do([]byte(encode("BF.RESERVE", "m", "0.01", strconv.Itoa(capacity), "NONSCALING")))); r != "+OK\r\n" {
		b.Fatal(r)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	cmds := make([][]byte, 32)
	for i := range cmds {
		args := []string{"BF.MADD", "m"}
		for range 1000 {
			args = append(args, strconv.FormatUint(rng.Uint64()>>24, 36)) // 8 characters: the command fits the read buffer
		}
		cmds[i] = []byte(encode(args...))
	}
	b.ResetTimer()
	for i := range b.N {
		c.do(cmds[i%len(cmds)])
	}
	b.ReportMetric(float64(b.N)*1000/b.Elapsed().Seconds(), "items/s")
}
