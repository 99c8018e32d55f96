package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bloomkit/bloomkit"
	"github.com/stretchr/testify/require"
)

// TestDedupWarnsWhenCapacityIsCrossed replays issue 26 row 7 for dedup: it
// warned of a filter past its capacity only at the end of its input, so a
// dedup on an endless pipe (tail -f) never did. Now the warning comes when
// the lines pass the capacity, while the pipe is still open.
func TestDedupWarnsWhenCapacityIsCrossed(t *testing.T) {
	dir := t.TempDir()
	cmd := bkCommand(t, "dedup", "-n", "1000", "-state", "seen.bloom")
	cmd.Dir = dir
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	cmd.Stdout = io.Discard
	require.NoError(t, cmd.Start())
	defer func() {
		stdin.Close()
		cmd.Wait()
	}()
	_, err = io.WriteString(stdin, keyLines("line", 1500))
	require.NoError(t, err)
	lines := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(stderr).ReadString('\n')
		lines <- l
	}()
	select {
	case l := <-lines:
		require.Contains(t, l, "bloomkit dedup: warning: seen.bloom: more keys than its capacity of 1000")
	case <-time.After(20 * time.Second):
		require.FailNow(t, "no warning while the input is open")
	}
}

// TestDedupStrict: with -strict dedup stops at the capacity (exit 2); the
// lines printed are the lines recorded, and the next run goes on from
// there.
func TestDedupStrict(t *testing.T) {
	dir := t.TempDir()
	in := keyLines("line", 1500)
	r := bk(t, dir, in, "dedup", "-strict", "-n", "1000", "-state", "seen.bloom")
	r.fails(t, "seen.bloom", "capacity of 1000", "-strict")
	printed := strings.Count(r.stdout, "\n")
	require.GreaterOrEqual(t, printed, 1000)
	require.Contains(t, bk(t, dir, "", "info", "seen.bloom").ok(t), fmt.Sprintf("added          %d ", 1000))
}

func TestDedupKeepsStateAcrossRuns(t *testing.T) {
	dir := t.TempDir()
	out := bkIn(t, dir, "x\ny\nx\r\n\nz\ny\n", "dedup", "-state", "seen.bloom", "-n", "1000").ok(t)
	require.Equal(t, "x\ny\nz\n", out)
	out = bkIn(t, dir, "z\nw\nx\n", "dedup", "-state", "seen.bloom").ok(t)
	require.Equal(t, "w\n", out, "lines seen in the earlier run are dropped")
	out = bkIn(t, dir, "q\nq\n", "dedup").ok(t)
	require.Equal(t, "q\n", out, "without state")
}

// TestDeduperExact: the pending batch finds repeats exactly, also when the
// hash that indexes it collides (here, every line has the same hash), and
// lines reach the filter only once written.
func TestDeduperExact(t *testing.T) {
	v := variants["standard"]
	for _, collide := range []bool{false, true} {
		f, err := v.new(100_000, 1e-9)
		require.NoError(t, err)
		var out bytes.Buffer
		d := newDeduper(f.(bloomkit.Adder), v.builder(f), &out)
		if collide {
			d.hash = func([]byte) uint64 { return 42 }
		}
		var want bytes.Buffer
		seen := map[string]bool{}
		for j := 0; j < 30_000; j++ {
			line := fmt.Sprintf("line-%d", (j*7919)%20_011)
			if !seen[line] {
				seen[line] = true
				want.WriteString(line + "\n")
			}
			require.NoError(t, d.line([]byte(line)))
			if j == 100 {
				require.False(t, f.Contains([]byte("line-0")), "not recorded before it is written")
			}
		}
		require.NoError(t, d.flush())
		require.Equal(t, want.String(), out.String(), "collide=%v", collide)
		for l := range seen {
			require.True(t, f.Contains([]byte(l)), "recorded once written")
		}
	}
}

// TestDedupAddsAtTurn: without -state, dedup prints exactly the lines the
// plain loop "if f.Add(line) { print(line) }" prints over a filter of the
// same variant, size and seed, false positives included: here a filter
// of 2,000 keys at 5% takes 6,000 distinct lines with repeats, so many
// new lines find their bits set by the lines before them, in their own
// chunk and in earlier ones. Chunks of 64 bytes and of 4 KiB, from a file
// and from stdin, with the workers' screening on and off across the
// phases of the input; the capacity warning comes as before.
func TestDedupAddsAtTurn(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(3, 4))
	var in strings.Builder
	for i := range 6000 {
		fmt.Fprintf(&in, "line-%d\n", i)
		if i%3 == 0 { // repeats of recent and older lines
			fmt.Fprintf(&in, "line-%d\n", r.IntN(i+1))
		}
	}
	for range 3000 { // mostly repeats: the workers screen
		fmt.Fprintf(&in, "line-%d\n", r.IntN(7000))
	}
	writeFile(t, filepath.Join(dir, "in.txt"), in.String())
	for _, variant := range []string{"standard", "partitioned"} {
		ref, err := variants[variant].new(2000, 0.05)
		require.NoError(t, err)
		var want strings.Builder
		for _, line := range strings.Split(strings.TrimSuffix(in.String(), "\n"), "\n") {
			if ref.(bloomkit.Adder).Add([]byte(line)) {
				want.WriteString(line + "\n")
			}
		}
		distinct := 7000
		require.Less(t, strings.Count(want.String(), "\n"), distinct-200, "%s: false positives happen", variant)
		for _, chunk := range []int{64, 4096} {
			tinyChunks(t, chunk)
			got := bkIn(t, dir, "", "dedup", "-variant", variant, "-n", "2000", "-p", "0.05", "in.txt")
			require.Equal(t, want.String(), got.stdout, "%s, chunks of %d", variant, chunk)
			require.Contains(t, got.stderr, "more keys than its capacity of 2000", variant)
			got = bkIn(t, dir, in.String(), "dedup", "-variant", variant, "-n", "2000", "-p", "0.05")
			require.Equal(t, want.String(), got.stdout, "%s, chunks of %d, stdin", variant, chunk)
		}
	}
}
