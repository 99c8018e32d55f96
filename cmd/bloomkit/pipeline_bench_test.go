package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var (
	flagLinesN   = flag.Int("lines.n", 1<<21, "BenchmarkLineCommands: how many 56-byte URL lines (1e7 in docs/pipeline.md)")
	flagLinesDir = flag.String("lines.dir", "", "BenchmarkLineCommands: the folder of the line file and the filters (a temporary one when empty; /dev/shm in docs/pipeline.md)")
)

// BenchmarkLineCommands runs the line commands of the whitelist job as the
// user does, each a process of the built binary over a file of -lines.n
// distinct 56-byte URL lines (in the page cache after the first read), in
// turns with `wc -l` of the same file, so that both see the same machine.
// It reports the command's line rate over wc -l's (x-wc: the time of wc -l
// over the command's, median of the turns; issue 24's targets are 0.3 for
// build and test -absent, 0.2 for dedup; dedup-state is the crawler's form,
// with a state file) and the CPU the command used
// (cpu-%: user + system over wall time, 200 = both cores of the CI
// machine busy). docs/pipeline.md gives the command and the figures.
func BenchmarkLineCommands(b *testing.B) {
	if _, err := exec.LookPath("wc"); err != nil {
		b.Skip("no wc on this machine")
	}
	dir := b.TempDir()
	if *flagLinesDir != "" {
		var err error
		dir, err = os.MkdirTemp(*flagLinesDir, "bloomkit-bench-")
		require.NoError(b, err)
		b.Cleanup(func() { os.RemoveAll(dir) })
	}
	urls := filepath.Join(dir, "urls.txt")
	f, err := os.Create(urls)
	require.NoError(b, err)
	w := bufio.NewWriterSize(f, 1<<20)
	for i := range *flagLinesN {
		fmt.Fprintf(w, "https://www.example.com/catalog/%016x/p%05d\n", uint64(i)*0x9e3779b97f4a7c15, i%100000)
	}
	require.NoError(b, w.Flush())
	require.NoError(b, f.Close())
	n := fmt.Sprint(*flagLinesN)
	built := filepath.Join(dir, "m.bloom")
	runTimed(b, dir, bloomkitBin, "build", "-variant", "partitioned", "-n", n, "-o", built, urls)
	out, state := filepath.Join(dir, "b.bloom"), filepath.Join(dir, "seen.bloom")
	for _, c := range []struct {
		name string
		args []string
	}{
		{"build", []string{"build", "-variant", "partitioned", "-n", n, "-o", out, urls}},
		{"build-counted", []string{"build", "-variant", "partitioned", "-o", out, urls}},
		{"test-absent", []string{"test", "-absent", built, "-f", urls}},
		{"dedup", []string{"dedup", "-variant", "partitioned", "-n", n, urls}},
		{"dedup-standard", []string{"dedup", "-n", n, urls}},
		// A new state file each turn (removed first): every line is new.
		{"dedup-state", []string{"dedup", "-variant", "partitioned", "-n", n, "-state", state, urls}},
	} {
		b.Run("cmd="+c.name, func(b *testing.B) {
			var ratios, cpus []float64
			for b.Loop() {
				os.Remove(state)
				wc, _ := runTimed(b, dir, "wc", "-l", urls)
				wall, cpu := runTimed(b, dir, bloomkitBin, c.args...)
				ratios = append(ratios, wc.Seconds()/wall.Seconds())
				cpus = append(cpus, 100*cpu.Seconds()/wall.Seconds())
			}
			b.ReportMetric(median(ratios), "x-wc")
			b.ReportMetric(median(cpus), "cpu-%")
		})
	}
}

// runTimed runs name with args in dir, output discarded; exit 1 (test -absent
// of keys that are all present: nothing selected) counts as success. It
// returns the wall time and the CPU time (user + system) of the process.
func runTimed(b *testing.B, dir, name string, args ...string) (wall, cpu time.Duration) {
	b.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	start := time.Now()
	err := cmd.Run()
	wall = time.Since(start)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		require.NoError(b, err, "%s %v", name, args)
	}
	return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
