package serve

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/bloomkit/bloomkit/partitioned"
)

// benchServer serves one partitioned filter "f" of n keys ("key-0" ...),
// n from $BLOOMKIT_SERVE_BENCH_N (default 1e6; 7e8 makes a 1 GB filter).
func benchServer(b *testing.B) (*testServer, int) {
	n := 1_000_000
	if v := os.Getenv("BLOOMKIT_SERVE_BENCH_N"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			b.Fatal(err)
		}
		n = int(f)
	}
	dir := b.TempDir()
	f, err := partitioned.CreateTemp(filepath.Join(dir, "f.bloom"), uint64(n), 0.01)
	if err != nil {
		b.Fatal(err)
	}
	bl := f.Builder()
	for i := range n {
		bl.Add([]byte("key-" + strconv.Itoa(i)))
	}
	bl.Flush()
	if err := f.Publish(); err != nil {
		b.Fatal(err)
	}
	return start(b, cfgWith(func(c *Config) { c.Dir = dir })), n
}

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
		k := "key-" + strconv.Itoa((i*7919)%n)
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
			k := "key-" + strconv.Itoa(((i*100+j)*7919)%n)
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
