package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/mmapstore"
)

// tinyChunks makes line sources read chunks of n bytes for the test, so
// that a few thousand lines cross thousands of chunk boundaries and many
// chunks are in flight at once.
func tinyChunks(t *testing.T, n int) {
	old := lineChunkSize
	lineChunkSize = n
	t.Cleanup(func() { lineChunkSize = old })
}

// phasedInput is lines in phases: many repeats of few lines, then new
// lines, then repeats of those (so that screening on the workers turns on,
// off and on again with chunks in flight), with CRLF and CR CR LF endings
// and lines longer than a chunk. want is each distinct line once, in the
// order of first sight.
func phasedInput(seed uint64) (in, want string) {
	r := rand.New(rand.NewPCG(seed, 7))
	var b, w strings.Builder
	seen := map[string]bool{}
	emit := func(key string) {
		switch r.IntN(5) {
		case 0:
			b.WriteString(key + "\r\n")
		case 1:
			b.WriteString(key + "\r\r\n") // the key is key + CR
			key += "\r"
		default:
			b.WriteString(key + "\n")
		}
		if !seen[key] {
			seen[key] = true
			w.WriteString(key + "\n")
		}
	}
	for range 6000 {
		emit(fmt.Sprintf("few-%d", r.IntN(300)))
	}
	for i := range 3000 {
		emit(fmt.Sprintf("new-%d", i))
		if i%500 == 0 {
			emit(strings.Repeat("long", 50) + fmt.Sprint(i))
		}
	}
	for range 6000 {
		emit(fmt.Sprintf("new-%d", r.IntN(3000)))
		if r.IntN(10) == 0 {
			b.WriteString("\n") // empty lines are skipped
		}
	}
	return b.String(), w.String()
}

// TestDedupPipelineKeepsOrder: dedup through the line pipeline prints each
// distinct line exactly once, in the order of first sight, with repeats
// inside one chunk, across chunk boundaries and across chunks in flight;
// from a file (chunks filled), from stdin (chunks per read), and in two
// runs sharing a state file (the second prints only lines the first had
// not seen).
func TestDedupPipelineKeepsOrder(t *testing.T) {
	dir := t.TempDir()
	for _, chunk := range []int{16, 100, 4096} {
		tinyChunks(t, chunk)
		old := dedupBatch
		dedupBatch = chunk / 2
		t.Cleanup(func() { dedupBatch = old })
		for seed := uint64(1); seed <= 2; seed++ {
			in, want := phasedInput(seed)
			writeFile(t, filepath.Join(dir, "in.txt"), in)
			for _, variant := range []string{"standard", "partitioned", "scalable"} {
				msg := fmt.Sprintf("chunk %d seed %d %s", chunk, seed, variant)
				got := bkIn(t, dir, "", "dedup", "-variant", variant, "-n", "100000", "-p", "1e-9", "in.txt").ok(t)
				require.Equal(t, want, got, msg)
				got = bkIn(t, dir, in, "dedup", "-variant", variant, "-n", "100000", "-p", "1e-9").ok(t)
				require.Equal(t, want, got, msg+" stdin")
			}
			state := filepath.Join(dir, fmt.Sprintf("seen-%d-%d.bloom", chunk, seed))
			half := strings.Index(in[len(in)/2:], "\n") + len(in)/2 + 1
			first := bkIn(t, dir, in[:half], "dedup", "-state", state, "-n", "100000", "-p", "1e-9").ok(t)
			second := bkIn(t, dir, in, "dedup", "-state", state).ok(t)
			require.Equal(t, want, first+second, "chunk %d seed %d: two runs", chunk, seed)
			require.Empty(t, bkIn(t, dir, in, "dedup", "-state", state).stdout)
		}
	}
}

// TestTestAndBuildThroughThePipeline: with chunks of a few bytes, test
// prints its answers in input order and build makes the same file as one
// add of the keys as arguments; a too-long line is reported with its line
// number, wherever it falls.
func TestTestAndBuildThroughThePipeline(t *testing.T) {
	dir := t.TempDir()
	tinyChunks(t, 24)
	var keys, probe, want, wantAbsent strings.Builder
	var args []string
	added := map[string]bool{}
	for i := range 2000 {
		k := fmt.Sprintf("key-%d", i*7919%2003)
		keys.WriteString(k + "\r\n")
		args = append(args, k)
		added[k] = true
	}
	for i := range 3000 {
		k := fmt.Sprintf("key-%d", i)
		probe.WriteString(k + "\n")
		if added[k] {
			fmt.Fprintf(&want, "%s\tpresent\n", k)
		} else {
			fmt.Fprintf(&want, "%s\tabsent\n", k)
			wantAbsent.WriteString(k + "\n")
		}
	}
	writeFile(t, filepath.Join(dir, "keys.txt"), keys.String())
	writeFile(t, filepath.Join(dir, "probe.txt"), probe.String())
	for _, variant := range []string{"standard", "counting", "partitioned", "scalable"} {
		bkIn(t, dir, "", "build", "-force", "-variant", variant, "-n", "5000", "-p", "1e-9", "-o", "b.bloom", "keys.txt").ok(t) // -force: over the last variant's
		bkIn(t, dir, "", "create", "-variant", variant, "-n", "5000", "-p", "1e-9", "a.bloom").ok(t)
		bkIn(t, dir, "", "add", "a.bloom", "-f", "keys.txt").ok(t)
		require.Equal(t, want.String(), bkIn(t, dir, "", "test", "b.bloom", "-f", "probe.txt").stdout, variant)
		require.Equal(t, wantAbsent.String(), bkIn(t, dir, probe.String(), "test", "-absent", "a.bloom").stdout, variant)
		if variant != "scalable" { // a scalable file records its growth, not only its bits
			b, err := os.ReadFile(filepath.Join(dir, "b.bloom"))
			require.NoError(t, err)
			os.Remove(filepath.Join(dir, "a.bloom"))
			bkIn(t, dir, "", "create", "-variant", variant, "-n", "5000", "-p", "1e-9", "a.bloom").ok(t)
			bkIn(t, dir, "", append([]string{"add", "a.bloom"}, args...)...).ok(t)
			a, err := os.ReadFile(filepath.Join(dir, "a.bloom"))
			require.NoError(t, err)
			require.Equal(t, a[mmapstore.PayloadOffset:], b[mmapstore.PayloadOffset:], "%s: the bits of build are those of add", variant)
		}
		os.Remove(filepath.Join(dir, "a.bloom"))
	}
	long := strings.Repeat("x", 101)
	for _, at := range []int{1, 2, 7, 500} {
		lines := make([]string, 600)
		for i := range lines {
			lines[i] = fmt.Sprint("k", i)
		}
		lines[at-1] = long
		writeFile(t, filepath.Join(dir, "long.txt"), strings.Join(lines, "\n")+"\n")
		for _, cmd := range [][]string{{"build", "-max-line", "100", "-o", "l.bloom", "long.txt"}, {"test", "-max-line", "100", "b.bloom", "-f", "long.txt"}, {"dedup", "-max-line", "100", "long.txt"}} {
			r := bkIn(t, dir, "", cmd...)
			require.Equal(t, 2, r.code, "%v", cmd)
			require.Contains(t, r.stderr, fmt.Sprintf("long.txt:%d: line longer than 100 bytes", at), "%v", cmd)
		}
	}
}
