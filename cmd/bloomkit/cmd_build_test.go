package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/mmapstore"
	"github.com/stretchr/testify/require"
)

// TestBuildPastCapacity replays issue 26 row 7: `bloomkit build -n 1000`
// of far more lines answered "present" for every key with exit 0 and no
// word, and `info` printed the estimated count as 18446744073709551615.
// Now build warns in one line the moment the keys pass the capacity, info
// says the filter is saturated (and prints no wrapped number), and -strict
// fails with exit 2 and publishes nothing.
func TestBuildPastCapacity(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "keys.txt"), keyLines("key-", 200_000))
	r := bk(t, dir, "", "build", "-n", "1000", "-o", "a.bloom", "keys.txt")
	r.ok(t)
	require.Equal(t, 1, strings.Count(r.stderr, "\n"), "one warning line: %q", r.stderr)
	require.Contains(t, r.stderr, "warning: a.bloom: more keys than its capacity of 1000")

	info := bk(t, dir, "", "info", "a.bloom").ok(t)
	require.NotContains(t, info, "18446744073709551615")
	require.Contains(t, info, "more than the filter can estimate")
	require.Contains(t, info, "SATURATED")

	bk(t, dir, "", "test", "a.bloom", "never-added").ok(t) // the row: present, exit 0...
	tr := bk(t, dir, "", "test", "a.bloom", "never-added")
	require.Contains(t, tr.stderr, "saturated", "...but now with a warning")

	bk(t, dir, "", "build", "-strict", "-n", "1000", "-o", "s.bloom", "keys.txt").fails(t, "s.bloom", "capacity of 1000", "-strict")
	require.Equal(t, []string{"a.bloom", "keys.txt"}, dirNames(t, dir), "-strict published nothing and left no temporary file")

	// Within capacity: no warning, and info says so.
	r = bk(t, dir, "", "build", "-n", "200000", "-o", "b.bloom", "keys.txt")
	r.ok(t)
	require.Empty(t, r.stderr)
	require.Contains(t, bk(t, dir, "", "info", "b.bloom").ok(t), "state          within capacity")
}

// TestFileBytesMatchesTheFile pins fileBytes, the size the size checks use,
// to the files the variants really make.
func TestFileBytesMatchesTheFile(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"standard", "counting", "partitioned", "scalable"} {
		for _, n := range []uint64{1, 1000, 123457} {
			v, err := variantByName(name)
			require.NoError(t, err)
			path := filepath.Join(dir, fmt.Sprintf("%s-%d.bloom", name, n))
			f, err := v.create(path, n, 0.001, false)
			require.NoError(t, err)
			require.NoError(t, f.Close())
			st, err := os.Stat(path)
			require.NoError(t, err)
			want, err := v.fileBytes(n, 0.001)
			require.NoError(t, err)
			require.Equal(t, uint64(st.Size()), want, "%s n=%d", name, n)
		}
	}
}

func TestBuildPublishesAtomically(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "keys.txt"), keyLines("k", 5000))
	out := bk(t, dir, "", "build", "-p", "0.01", "-o", "w.bloom", "keys.txt").ok(t)
	require.Contains(t, out, "capacity 5000", "-n counted from the input")
	out = bk(t, dir, keyLines("s", 700), "build", "-o", "s.bloom").ok(t)
	require.Contains(t, out, "capacity 700", "stdin counted too")
	require.Equal(t, 0, bk(t, dir, "", "test", "-q", "s.bloom", "s699").code)
	// Rebuild over an existing file; a failed build leaves it untouched.
	bk(t, dir, "", "build", "-n", "100", "-o", "w.bloom", "missing.txt").fails(t, "missing.txt")
	require.Equal(t, 0, bk(t, dir, "", "test", "-q", "w.bloom", "k4999").code)
	entries, _ := os.ReadDir(dir)
	require.Len(t, entries, 3, "no temporary files left: %v", entries)
	bk(t, dir, "", "build", "-n", "100", "-o", "w.bloom", "-variant", "bogus", "keys.txt").fails(t, "bogus")
	bk(t, dir, "", "build", "keys.txt").fails(t, "-o")
	bk(t, dir, "", "build", "-o", "e.bloom").fails(t, "no keys")

	// Repeated keys are counted once, whatever the variant's Added means
	// (a counting filter's counts every Add).
	writeFile(t, filepath.Join(dir, "twice.txt"), keyLines("d", 1000)+keyLines("d", 1000))
	out = bk(t, dir, "", "build", "-variant", "counting", "-p", "0.001", "-o", "c.bloom", "twice.txt").ok(t)
	require.Contains(t, out, "filter of 2000 keys (1000 distinct by the filter)")
}

// TestBuildMatchesAdd: build fills a new file of every variant that has a
// single-writer Builder (standard, partitioned, counting) with it, and a
// scalable one with TryAdd; the file is the one Filter.Add makes of the
// same keys (every word, and the count in its header, which the Builder
// reaches only when flushed before the publish). The input spans several
// chunks of more than 4,096 keys each (a partitioned build hands each
// chunk's digests to Builder.AddDigests at once), and the file is the same
// with -n, counted (no -n) and with -strict (one key at a time).
func TestBuildMatchesAdd(t *testing.T) {
	tinyChunks(t, 64<<10)                                        // 8,000 to 10,000 keys a chunk
	lines := keyLines("u", 20000) + keyLines("u", 300)           // repeats are not new
	keys := strings.Split(strings.TrimSuffix(lines, "\n"), "\n") // 20,300 lines in 3 chunks
	payload := func(f bloomkit.Filter) []byte {
		var b bytes.Buffer
		_, err := f.(io.WriterTo).WriteTo(&b)
		require.NoError(t, err)
		return b.Bytes()[mmapstore.PayloadOffset:]
	}
	for _, name := range []string{"standard", "partitioned", "counting", "scalable"} {
		for _, form := range []struct {
			name  string
			flags []string
			n     uint64
		}{{"-n", []string{"-n", "20000"}, 20000}, {"counted", nil, 20300}, {"-strict", []string{"-n", "20000", "-strict"}, 20000}} {
			t.Run(name+"/"+form.name, func(t *testing.T) {
				v, err := variantByName(name)
				require.NoError(t, err)
				dir := t.TempDir()
				writeFile(t, filepath.Join(dir, "keys.txt"), lines)
				args := append(append([]string{"build", "-variant", name}, form.flags...), "-p", "0.001", "-o", "f.bloom", "keys.txt")
				out := bkIn(t, dir, "", args...).ok(t)
				got, err := openFile(filepath.Join(dir, "f.bloom"), true)
				require.NoError(t, err)
				defer got.Close()

				want, err := v.new(form.n, 0.001)
				require.NoError(t, err)
				for _, k := range keys {
					want.(bloomkit.Adder).Add([]byte(k))
				}
				require.Equal(t, want.Added(), got.Added(), "the header's count")
				if name != "counting" { // counting's Added counts every Add
					require.Contains(t, out, fmt.Sprintf("filter of 20300 keys (%d distinct by the filter)", want.Added()))
					require.Greater(t, want.Added(), uint64(19900), "at most a few keys of 20000 are false positives at 0.1%")
				}
				require.True(t, bytes.Equal(payload(want), payload(got)), "the same payload")
			})
		}
	}
}
