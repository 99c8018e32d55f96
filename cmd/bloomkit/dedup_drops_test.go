package main

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDedupDefaultDropsNothing replays issue 42 row 6: `bloomkit dedup` on
// its defaults (then -p 0.01 at -n 1e7) dropped 1,782 of 7,000,073 new
// lines of a 10^7-line file, where sort -u drops none. 7·10^6 distinct
// lines through the built binary on its defaults: every line comes out,
// and nothing is said on stderr (the expected loss is under one line).
func TestDedupDefaultDropsNothing(t *testing.T) {
	const n = 7_000_000
	dir := t.TempDir()
	var b strings.Builder
	for i := range n {
		b.WriteString("https://example.org/page/")
		b.WriteString(strconv.Itoa(i))
		b.WriteByte('\n')
	}
	in := filepath.Join(dir, "urls.txt")
	require.NoError(t, os.WriteFile(in, []byte(b.String()), 0o644))
	r := bk(t, dir, "", "dedup", "urls.txt")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, n, strings.Count(r.stdout, "\n"), "new lines dropped as seen")
	require.Empty(t, r.stderr)
}

var dropsLine = regexp.MustCompile(`(\d+) new lines recorded; about ([0-9.e+-]+) new lines expected dropped`)

// TestDedupPrintsExpectedDrops: where the expected loss is a line or more
// (-p 0.01 filled to its capacity), dedup says so on stderr, and the
// number it prints is the number dropped within a few standard deviations
// (drops are a sum of independent rare events: variance about the mean)
// plus the model's own error, 15%.
func TestDedupPrintsExpectedDrops(t *testing.T) {
	const n = 1_000_000
	var b strings.Builder
	for i := range n {
		b.WriteString("k")
		b.WriteString(strconv.Itoa(i))
		b.WriteByte('\n')
	}
	r := bk(t, t.TempDir(), b.String(), "dedup", "-p", "0.01", "-n", strconv.Itoa(n))
	require.Equal(t, 0, r.code, r.stderr)
	m := dropsLine.FindStringSubmatch(r.stderr)
	require.NotNil(t, m, "no expected-drops line: %q", r.stderr)
	expected, err := strconv.ParseFloat(m[2], 64)
	require.NoError(t, err)
	dropped := float64(n - strings.Count(r.stdout, "\n"))
	require.Equal(t, strconv.Itoa(n-int(dropped)), m[1])
	require.Greater(t, dropped, 0.0, "a rate of 0.01 at capacity drops lines")
	require.InDelta(t, expected, dropped, 5*math.Sqrt(expected)+0.15*expected,
		"printed %v expected drops, %v dropped", expected, dropped)
}
