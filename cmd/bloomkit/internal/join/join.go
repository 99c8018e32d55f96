package join

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// LineReader reads the input name ("-" is stdin) once and calls fn with
// each of its lines, as every bloomkit command reads lines (without the
// line ending, empty lines skipped, gzip decompressed). The raw bytes it
// reads (before decompression) go through tap first. label names the pass
// for a progress bar.
type LineReader func(name, label string, tap func(io.Reader) io.Reader, fn func(line []byte) error) error

// Config is one run of the join.
type Config struct {
	Mem     uint64     // the memory budget, at least 1 MiB
	TempDir string     // where the run's temporary folder goes ("": the system's)
	Lines   LineReader // reads an input
	Stdin   *os.File   // what "-" reads, to tell when it is another input too (nil: unknown)
	Out     io.Writer  // the lines in common go there
	Log     io.Writer  // -v: each pass and the I/O (nil: quiet)
	// Progress draws a progress bar of the join on stderr.
	Progress bool
	// OnInterrupt, when set, registers a function to run at once when the
	// run is interrupted (Interrupts.OnInterrupt): the removal of the
	// temporary folder.
	OnInterrupt func(func())
}

// Run prints to cfg.Out the lines present in every input, exactly, as a
// multiset: a line that occurs c_i times in input i is printed min(c_i)
// times, its first occurrences in the last input, in that input's order.
// docs/common.md gives the algorithm and its cost. An input named twice
// (the same file under two names, or the same stream) is read once. Run
// returns ErrChanged if a regular input changed while it was read; the
// context's cause if it is cancelled. Its temporary files are gone when it
// returns.
func Run(ctx context.Context, cfg Config, names []string) error {
	if len(names) < 2 {
		return fmt.Errorf("want at least two files, got %d arguments", len(names))
	}
	if cfg.Mem < 1<<20 {
		return fmt.Errorf("-mem %d: at least 1MiB", cfg.Mem)
	}
	j := &job{ctx: ctx, cfg: cfg, started: time.Now()}
	return j.run(names)
}

// job is one run.
type job struct {
	ctx        context.Context
	cfg        Config
	folder     *tempFolder // the run's temporary folder, once made
	files      *openFiles
	started    time.Time
	tmpWritten uint64
}

func (j *job) logf(format string, args ...any) {
	if j.cfg.Log != nil {
		fmt.Fprintf(j.cfg.Log, "common: %6.2fs  ", time.Since(j.started).Seconds())
		fmt.Fprintf(j.cfg.Log, format+"\n", args...)
	}
}

func (j *job) run(names []string) error {
	sweepStale(j.cfg.TempDir, j.logf)
	inputs := make([]*input, len(names))
	for i, name := range names {
		in, err := statInput(name, j.cfg.Stdin)
		if err != nil {
			return err
		}
		inputs[i] = in
	}
	defer j.logDone(inputs)
	defer j.removeTemp()
	inputs, notes := distinct(inputs)
	for _, n := range notes {
		j.logf("%s", n)
	}
	last, counted := inputs[len(inputs)-1], inputs[:len(inputs)-1]
	if len(counted) == 0 {
		return j.printAll(last)
	}
	// The table of the smallest input that can be sized in advance: if it
	// fits, every input is read once and nothing is written.
	var small *input
	for _, in := range counted {
		if in.size >= 0 && (small == nil || in.tableNeed() < small.tableNeed()) {
			small = in
		}
	}
	if small != nil && small.tableNeed() <= j.work() {
		return j.inMemory(small, counted, last)
	}
	return j.grace(counted, last)
}

func (j *job) logDone(inputs []*input) {
	if j.cfg.Log == nil {
		return
	}
	var reads []string
	for _, in := range inputs {
		reads = append(reads, fmt.Sprintf("%s %d×", in.name, in.passes))
	}
	j.logf("done; inputs read: %s; temporary bytes written %d; %s", strings.Join(reads, ", "), j.tmpWritten, procIO())
}

// reserve is the memory kept out of the budget for buffers: batches in
// flight, readers, partition writers.
func (j *job) reserve() uint64 { return min(8<<20, j.cfg.Mem/4) }

func (j *job) work() uint64 { return j.cfg.Mem - j.reserve() }

func (j *job) print(line []byte) error {
	if _, err := j.cfg.Out.Write(line); err != nil {
		return err
	}
	_, err := j.cfg.Out.Write([]byte{'\n'})
	return err
}

// tempFiles makes the run's temporary folder, removed by removeTemp and on
// an interrupt, after removing the stale folders of dead runs.
func (j *job) tempFiles() (*openFiles, error) {
	if j.files != nil {
		return j.files, nil
	}
	folder, err := makeTempFolder(j.cfg.TempDir)
	if err != nil {
		return nil, err
	}
	j.folder = folder
	if j.cfg.OnInterrupt != nil {
		j.cfg.OnInterrupt(folder.remove)
	}
	j.files = newOpenFiles(folder, maxOpenFiles())
	return j.files, nil
}

func (j *job) removeTemp() {
	if j.files != nil {
		j.files.closeAll()
	}
	if j.folder != nil {
		j.folder.remove()
	}
}

// procIO is this process's I/O counters from /proc/self/io (Linux), for -v.
func procIO() string {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return "no /proc/self/io"
	}
	var fields []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if k, v, ok := strings.Cut(l, ": "); ok && (k == "rchar" || k == "wchar" || k == "read_bytes" || k == "write_bytes") {
			fields = append(fields, k+" "+v)
		}
	}
	return "/proc/self/io: " + strings.Join(fields, ", ")
}
