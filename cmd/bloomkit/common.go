package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/bloomkit/bloomkit/partitioned"
)

// commonCommand: see docs/common.md for the algorithm and its cost.
func commonCommand(fs *flag.FlagSet, std stdio) func([]string) error {
	mem := sizeFlag{bytes: 256 << 20}
	fs.Var(&mem, "mem", "memory budget (forms like 64MB or 1GiB); the peak resident set stays near it")
	tmpDir := fs.String("tmp", "", "folder for temporary files (default: the system's temporary folder)")
	maxLine := fs.Int("max-line", defaultMaxLine, "longest line accepted, in bytes")
	verbose := fs.Bool("v", false, "report each pass, the bytes read and written, and the temporary space on stderr")
	return func(args []string) error {
		if len(args) < 2 {
			return fmt.Errorf("want at least two files, got %d arguments", len(args))
		}
		if mem.bytes < 1<<20 {
			return fmt.Errorf("-mem %d: at least 1MiB", mem.bytes)
		}
		if n := slices.Index(args, "-"); n >= 0 && slices.Index(args[n+1:], "-") >= 0 {
			return fmt.Errorf("stdin (-) given twice")
		}
		// The Go heap is held near the budget; the rest is the garbage
		// collector's headroom.
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(int64(mem.bytes)))
		ctx, onInterrupt, stop := commonInterrupts()
		defer stop()
		w := bufio.NewWriterSize(std.out, 256<<10)
		j := &commonJob{ctx: ctx, budget: mem.bytes, tmpRoot: *tmpDir, maxLine: *maxLine,
			out: w, onInterrupt: onInterrupt, progress: stderrIsTerminal()}
		if *verbose {
			j.log = std.err
		}
		err := j.run(args)
		err = errors.Join(err, w.Flush())
		var sig commonSignal
		if errors.As(context.Cause(ctx), &sig) {
			fmt.Fprintf(std.err, "bloomkit common: %v; temporary files removed\n", sig)
			return exitError{sig.exitCode()}
		}
		if errors.Is(err, syscall.EPIPE) {
			// The reader of stdout went away: stop quietly, as a process
			// killed by SIGPIPE does, with its status.
			return exitError{128 + int(syscall.SIGPIPE)}
		}
		return err
	}
}

// commonSink keeps the loads of lineTable.warm.
var commonSink uint64

// commonInput is one of the files.
type commonInput struct {
	name    string
	regular bool    // a regular file, which can be read again
	size    int64   // its bytes when known (regular and not compressed), else -1
	avgLine float64 // bytes per line (newline included) in its first 64KiB
	passes  int     // full reads of it
	lines   uint64  // lines read by the first pass
	parts   *partSet
}

// estLines is an estimate of the input's lines, or -1 if unknown.
func (in *commonInput) estLines() float64 {
	if in.size < 0 {
		return -1
	}
	return float64(in.size) / in.avgLine
}

// tableNeed is the table memory the input's distinct lines could take, or
// MaxUint64 if unknown.
func (in *commonInput) tableNeed() uint64 {
	if in.size < 0 {
		return math.MaxUint64
	}
	return tableBytes(uint64(in.estLines()*1.1)+16, uint64(in.size))
}

func statInput(name string) (*commonInput, error) {
	in := &commonInput{name: name, size: -1}
	if name == "-" {
		return in, nil
	}
	// Stat, not open: opening a FIFO would take its writer's data away
	// (or block until there is a writer). A pipe, FIFO or device is opened
	// once, when it is read.
	st, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return in, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	in.regular = true
	head := make([]byte, 64<<10)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, err
	}
	head = head[:n]
	if len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b {
		return in, nil // compressed: its line count is unknown
	}
	in.size = st.Size()
	in.avgLine = float64(max(1, len(head))) / float64(max(1, bytes.Count(head, []byte{'\n'})))
	return in, nil
}

// commonJob is one run of the common command.
type commonJob struct {
	ctx         context.Context
	budget      uint64
	tmpRoot     string
	tmp         string // the run's temporary folder, once made
	maxLine     int
	out         io.Writer
	onInterrupt func(func())
	progress    bool
	log         io.Writer // -v: passes and I/O
	started     time.Time
	tmpWritten  uint64
}

func (j *commonJob) logf(format string, args ...any) {
	if j.log != nil {
		fmt.Fprintf(j.log, "common: %6.2fs  ", time.Since(j.started).Seconds())
		fmt.Fprintf(j.log, format+"\n", args...)
	}
}

func (j *commonJob) run(names []string) error {
	j.started = time.Now()
	inputs := make([]*commonInput, len(names))
	for i, name := range names {
		in, err := statInput(name)
		if err != nil {
			return err
		}
		inputs[i] = in
	}
	defer func() {
		if j.log != nil {
			var reads []string
			for _, in := range inputs {
				reads = append(reads, fmt.Sprintf("%s %d×", in.name, in.passes))
			}
			j.logf("done; inputs read: %s; temporary bytes written %d; %s", strings.Join(reads, ", "), j.tmpWritten, commonProcIO())
		}
	}()
	defer j.removeTemp()

	last, counted := inputs[len(inputs)-1], inputs[:len(inputs)-1]
	work := j.work()
	// The table of the smallest input that can be sized in advance: if it
	// fits, every input is read once and nothing is written.
	var small *commonInput
	for _, in := range counted {
		if in.size >= 0 && (small == nil || in.tableNeed() < small.tableNeed()) {
			small = in
		}
	}
	if small != nil && small.tableNeed() <= work {
		return j.inMemory(small, counted, last)
	}
	return j.grace(counted, last)
}

// reserve is the memory kept out of the budget for buffers: batches in
// flight, readers, partition writers.
func (j *commonJob) reserve() uint64 { return min(8<<20, j.budget/4) }

func (j *commonJob) work() uint64 { return j.budget - j.reserve() }

// read streams every line of in through consume, counting the pass.
func (j *commonJob) read(in *commonInput, label string, keep batchFilter, consume func(*lineBatch) error) error {
	in.passes++
	src := newLineSource([]string{in.name}, j.maxLine, "common: "+label)
	src.progress = j.progress
	var lines uint64
	err := streamLines(j.ctx, func(add func([]byte, uint64) error) error {
		return src.each(func(line []byte) error { lines++; return add(line, 0) })
	}, keep, consume)
	if err != nil {
		return err
	}
	if in.passes == 1 {
		in.lines = lines
	} else if lines != in.lines {
		return fmt.Errorf("%s: %d lines on this pass, %d on the first: the file changed while it was read", in.name, lines, in.lines)
	}
	return nil
}

func (j *commonJob) print(line []byte) error {
	if _, err := j.out.Write(line); err != nil {
		return err
	}
	_, err := j.out.Write([]byte{'\n'})
	return err
}

// inMemory: small's lines in a table, every other input counted against
// it, the last file printed as it is read.
func (j *commonJob) inMemory(small *commonInput, counted []*commonInput, last *commonInput) error {
	j.logf("in memory: the table of %s takes about %d bytes of %d", small.name, small.tableNeed(), j.work())
	var t lineTable
	t.reset(uint64(small.estLines()*1.1)+16, uint64(small.size))
	if err := j.read(small, "reading "+small.name, nil, func(b *lineBatch) error {
		for i := range b.len() {
			if i%warmChunk == 0 {
				commonSink += t.warm(b.ds[i:min(i+warmChunk, b.len())])
			}
			t.add(b.ds[i].H1, b.line(i))
		}
		return nil
	}); err != nil {
		return err
	}
	for _, in := range counted {
		if in == small {
			continue
		}
		if err := j.read(in, "counting "+in.name, nil, func(b *lineBatch) error {
			for i := range b.len() {
				if i%warmChunk == 0 {
					commonSink += t.warm(b.ds[i:min(i+warmChunk, b.len())])
				}
				t.seen(b.ds[i].H1, b.line(i))
			}
			return nil
		}); err != nil {
			return err
		}
		t.endInput()
	}
	return j.read(last, "printing from "+last.name, nil, func(b *lineBatch) error {
		for i := range b.len() {
			if i%warmChunk == 0 {
				commonSink += t.warm(b.ds[i:min(i+warmChunk, b.len())])
			}
			if t.take(b.ds[i].H1, b.line(i)) {
				if err := j.print(b.line(i)); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// tempDir makes the run's temporary folder, removed by removeTemp and on a
// signal.
func (j *commonJob) tempDir() (string, error) {
	if j.tmp != "" {
		return j.tmp, nil
	}
	dir, err := os.MkdirTemp(j.tmpRoot, "bloomkit-common-")
	if err != nil {
		return "", tmpFullError(j.tmpRoot, err)
	}
	j.tmp = dir
	j.onInterrupt(func() { os.RemoveAll(dir) })
	return dir, nil
}

func (j *commonJob) removeTemp() {
	if j.tmp != "" {
		os.RemoveAll(j.tmp)
	}
}

// newCommonFilter returns a blocked Bloom filter of at most maxBytes for about n
// keys (n < 0: unknown).
func newCommonFilter(maxBytes uint64, n float64) (*partitioned.Filter, error) {
	// Up to 12 bits and 6 probes a key: a rate near 1% in the blocked
	// layout; more probes cost more time than the few lines they drop.
	m := max(maxBytes*8, partitioned.BlockBits)
	if n >= 0 {
		m = min(m, uint64(n*12)+partitioned.BlockBits)
	} else {
		n = float64(m) / 10
	}
	k := uint32(max(1, min(6, math.Round(float64(m)/math.Max(n, 1)*math.Ln2))))
	return partitioned.NewWithSize(m, k)
}

// grace is the partitioned join; docs/common.md describes its passes.
func (j *commonJob) grace(counted []*commonInput, last *commonInput) error {
	dir, err := j.tempDir()
	if err != nil {
		return err
	}
	work := j.work()
	// Partitions: enough that the table of the smallest input's share of
	// one fits the budget; too many costs little, as small partitions are
	// joined in groups. Unknown sizes (pipes, compressed files) get 128.
	need := uint64(math.MaxUint64)
	for _, in := range counted {
		need = min(need, in.tableNeed())
	}
	p := 128
	if need != math.MaxUint64 {
		p = int(min(4096, max(1, (need+need/4)/work+1)))
	}
	bufLen := int(min(256<<10, max(4<<10, (2<<20)/uint64(p))))
	j.logf("grace: %d partitions under %s, budget %d bytes (table %d)", p, dir, j.budget, work)

	// The inputs that can be read again pass through filters first and are
	// partitioned last, reduced by the filter of the last file's survivors;
	// the others are partitioned as they are read. Smallest first: its
	// filter shrinks the next.
	order := slices.Clone(counted)
	slices.SortStableFunc(order, func(a, b *commonInput) int {
		switch {
		case a.regular != b.regular:
			if a.regular {
				return -1
			}
			return 1
		case a.size < b.size:
			return -1
		case a.size > b.size:
			return 1
		}
		return 0
	})

	// Pass 1: the chain of filters. Filter i holds the lines of input i
	// that passed filter i-1: about the lines common to inputs 1..i. With
	// one input before the last there is one filter, which takes the whole
	// budget; a longer chain holds two at a time.
	var prev *partitioned.Filter
	prevN := math.Inf(1)
	filterMem := work
	if len(order) > 1 {
		filterMem = work / 2
	}
	for i, in := range order {
		cur, err := newCommonFilter(filterMem, math.Min(in.estLines(), prevN))
		if err != nil {
			return err
		}
		if !in.regular {
			if in.parts, err = newPartSet(dir, fmt.Sprintf("in%d", i), p, false, bufLen); err != nil {
				return err
			}
		}
		var kept uint64
		var keep batchFilter
		if prev != nil {
			keep = prev.ContainsMany
		}
		err = j.read(in, "filtering "+in.name, keep, func(b *lineBatch) error {
			kept += uint64(b.len())
			cur.AddMany(b.keys())
			if in.parts != nil {
				for i := range b.len() {
					if err := in.parts.write(partOf(b.ds[i], p), 0, b.line(i)); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if in.parts != nil {
			err = errors.Join(err, in.parts.close())
			_, n := in.parts.total()
			j.tmpWritten += n
		}
		if err != nil {
			return err
		}
		j.logf("pass over %s: %d lines, %d passed the filter (%d bits, k %d)", in.name, in.lines, kept, cur.Bits(), cur.K())
		prev, prevN = cur, float64(kept)
	}

	// Pass 2: the last file; the lines that pass the chain (its
	// survivors) are partitioned with their number.
	if last.parts, err = newPartSet(dir, "last", p, true, bufLen); err != nil {
		return err
	}
	var survivors uint64
	err = j.read(last, "partitioning "+last.name, prev.ContainsMany, func(b *lineBatch) error {
		for i := range b.len() {
			if err := last.parts.write(partOf(b.ds[i], p), survivors, b.line(i)); err != nil {
				return err
			}
			survivors++
		}
		return nil
	})
	err = errors.Join(err, last.parts.close())
	_, n := last.parts.total()
	j.tmpWritten += n
	if err != nil {
		return err
	}
	j.logf("pass over %s: %d lines, %d survivors partitioned (%d bytes)", last.name, last.lines, survivors, n)
	prev = nil
	if survivors == 0 {
		return nil
	}
	runtime.GC()
	debug.FreeOSMemory()

	// The filter of the survivors, read back from their partitions in the
	// whole budget, shrinks the inputs partitioned in pass 3 by the share
	// of their lines absent from the last file. When most of the last file
	// survived, most of their lines would pass too: it would cost more time
	// than it saves I/O, and is not built.
	var keepLast batchFilter
	regular := slices.ContainsFunc(order, func(in *commonInput) bool { return in.regular })
	if regular && survivors*10 <= last.lines*7 {
		fLast, err := newCommonFilter(work, float64(survivors))
		if err != nil {
			return err
		}
		if err := streamLines(j.ctx, func(add func([]byte, uint64) error) error {
			return last.parts.each(0, p, 256<<10, nil, add)
		}, nil, func(b *lineBatch) error {
			fLast.AddMany(b.keys())
			return nil
		}); err != nil {
			return err
		}
		keepLast = fLast.ContainsMany
		j.logf("filter of the survivors: %d bits, k %d", fLast.Bits(), fLast.K())
	} else if regular {
		j.logf("most of %s survived: the other inputs are partitioned without a filter of it", last.name)
	}

	// Pass 3: the inputs that can be read again, reduced by the last
	// file's survivors.
	for i, in := range order {
		if !in.regular {
			continue
		}
		if in.parts, err = newPartSet(dir, fmt.Sprintf("in%d", i), p, false, bufLen); err != nil {
			return err
		}
		err = j.read(in, "partitioning "+in.name, keepLast, func(b *lineBatch) error {
			for i := range b.len() {
				if err := in.parts.write(partOf(b.ds[i], p), 0, b.line(i)); err != nil {
					return err
				}
			}
			return nil
		})
		err = errors.Join(err, in.parts.close())
		r, n := in.parts.total()
		j.tmpWritten += n
		if err != nil {
			return err
		}
		j.logf("pass over %s: %d lines partitioned (%d bytes)", in.name, r, n)
	}
	keepLast = nil
	runtime.GC()
	debug.FreeOSMemory()

	// Pass 4: the exact join, one group of partitions at a time.
	confirmed := make([]uint64, (survivors+63)/64)
	tableBudget := work - min(work/2, uint64(len(confirmed))*8)
	type group struct {
		from, to int
		build    *commonInput
		n, b     uint64
	}
	var groups []group
	var maxN, maxB uint64
	for from := 0; from < p; {
		g := group{from: from, to: from}
		for g.to < p {
			var best *commonInput
			var bn, bb uint64
			for _, in := range counted {
				n, b := sumParts(in.parts, g.from, g.to+1)
				if best == nil || tableBytes(n, b) < tableBytes(bn, bb) {
					best, bn, bb = in, n, b
				}
			}
			if g.to > g.from && tableBytes(bn, bb) > tableBudget {
				break
			}
			g.to++
			g.build, g.n, g.b = best, bn, bb
		}
		groups = append(groups, g)
		maxN, maxB = max(maxN, g.n), max(maxB, g.b)
		from = g.to
	}
	j.logf("join: %d groups; the largest table takes %d bytes of %d", len(groups), tableBytes(maxN, maxB), tableBudget)
	var bar io.Writer
	if j.progress {
		var total uint64
		for _, in := range append(slices.Clone(counted), last) {
			_, n := in.parts.total()
			total += n
		}
		pb := progressbar.DefaultBytes(int64(total), "common: joining partitions")
		defer pb.Finish()
		bar = pb
	}
	var t lineTable
	t.reset(maxN, maxB)
	readParts := func(in *commonInput, g group, consume func(*lineBatch) error) error {
		return streamLines(j.ctx, func(add func([]byte, uint64) error) error {
			return in.parts.each(g.from, g.to, 256<<10, bar, add)
		}, nil, consume)
	}
	for _, g := range groups {
		t.reset(g.n, g.b)
		if err := readParts(g.build, g, func(b *lineBatch) error {
			for i := range b.len() {
				if i%warmChunk == 0 {
					commonSink += t.warm(b.ds[i:min(i+warmChunk, b.len())])
				}
				t.add(b.ds[i].H1, b.line(i))
			}
			return nil
		}); err != nil {
			return err
		}
		for _, in := range counted {
			if in == g.build {
				continue
			}
			if err := readParts(in, g, func(b *lineBatch) error {
				for i := range b.len() {
					t.seen(b.ds[i].H1, b.line(i))
				}
				return nil
			}); err != nil {
				return err
			}
			t.endInput()
		}
		if err := readParts(last, g, func(b *lineBatch) error {
			for i := range b.len() {
				if i%warmChunk == 0 {
					commonSink += t.warm(b.ds[i:min(i+warmChunk, b.len())])
				}
				if t.take(b.ds[i].H1, b.line(i)) {
					s := b.seqs[i]
					confirmed[s/64] |= 1 << (s % 64)
				}
			}
			return nil
		}); err != nil {
			return err
		}
	}
	t.release()
	for _, in := range counted {
		for _, path := range in.parts.paths {
			os.Remove(path)
		}
	}

	// Pass 5: the last file's survivors merged back into its order; the
	// confirmed ones are printed.
	var printed uint64
	err = last.parts.merge(max(4<<10, min(256<<10, int(tableBudget/2)/p)), bar, func() error { return context.Cause(j.ctx) }, func(line []byte, seq uint64) error {
		if confirmed[seq/64]&(1<<(seq%64)) == 0 {
			return nil
		}
		printed++
		return j.print(line)
	})
	j.logf("printed %d lines", printed)
	return err
}

func sumParts(ps *partSet, from, to int) (n, b uint64) {
	for p := from; p < to; p++ {
		n += ps.recs[p]
		b += ps.bytes[p]
	}
	return n, b
}

// commonProcIO is this process's I/O counters from /proc/self/io (Linux), for -v.
func commonProcIO() string {
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
