// Command soak serves a partitioned filter file through mmapstore.Live to
// several goroutines of lookups while the file is rebuilt and published over
// the served path, and counts errors and false negatives: the serving half
// of the whitelist job at full scale (docs/benchmarks.md, "Soak").
//
//	go run ./benchmarks/cmd/soak -n 1e9 -dir /var/tmp/soak   # the soak: about 25 GB of disk, an hour here
//	go run ./benchmarks/cmd/soak -n 1e6                       # a minute's check
//
// Every build holds keys 0..n-1 of the base set; each rebuild adds n/100 new
// keys of its own. A base key that tests absent is a false negative, which
// must never happen; the run fails (exit 1) on any error or false negative.
// It prints the build rate, the lookups per second during the rebuilds, the
// swaps seen and the peak resident set.
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bloomkit/bloomkit/mmapstore"
	"github.com/bloomkit/bloomkit/partitioned"
)

type config struct {
	n         uint64
	p         float64
	dir       string
	readers   int
	publishes int
}

func main() {
	cfg, err := parse(os.Args[1:], os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
	if err := run(cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

func parse(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.String("n", "1e6", "keys in the base set of every build")
	p := fs.Float64("p", 0.01, "target false-positive rate")
	dir := fs.String("dir", "", "folder for the filter file (default: a new temporary folder, removed afterwards)")
	readers := fs.Int("readers", 8, "goroutines of lookups")
	publishes := fs.Int("publishes", 2, "rebuilds published over the served file")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	f, err := strconv.ParseFloat(*n, 64)
	if err != nil || f < 1 || f > 1e12 {
		return config{}, fmt.Errorf("-n %q: want a count such as 1e9", *n)
	}
	if *readers < 1 || *publishes < 1 {
		return config{}, errors.New("-readers and -publishes must be at least 1")
	}
	return config{n: uint64(f), p: *p, dir: *dir, readers: *readers, publishes: *publishes}, nil
}

// key writes key i of set into buf: 16 bytes.
func key(buf []byte, set, i uint64) []byte {
	binary.LittleEndian.PutUint64(buf, i*0x9e3779b97f4a7c15^set)
	binary.LittleEndian.PutUint64(buf[8:], set)
	return buf[:16]
}

// build publishes at path a filter of the base set and extra keys of set.
func build(path string, cfg config, set, extra uint64) (time.Duration, error) {
	start := time.Now()
	f, err := partitioned.CreateTemp(path, cfg.n+extra, cfg.p)
	if err != nil {
		return 0, err
	}
	b := f.Builder()
	buf := make([]byte, 16)
	for i := uint64(0); i < cfg.n; i++ {
		b.Add(key(buf, 0, i))
	}
	for i := uint64(0); i < extra; i++ {
		b.Add(key(buf, set, i))
	}
	b.Flush()
	return time.Since(start), f.Publish()
}

type counts struct {
	lookups, falseNegatives, errors atomic.Uint64
	swaps                           atomic.Uint64
	started                         atomic.Int64 // readers that made their first lookup
}

// serve looks up base keys through its own Reader until ctx is done.
func serve(ctx context.Context, live *mmapstore.Live[*partitioned.Filter], cfg config, id int, c *counts) {
	r := live.NewReader()
	defer r.Close()
	buf := make([]byte, 16)
	var last *partitioned.Filter
	var lookups uint64 // added to c at the end: a shared counter per lookup would cost more than the lookup
	defer func() { c.lookups.Add(lookups) }()
	for i := uint64(id); ctx.Err() == nil; i += uint64(cfg.readers) {
		f, err := r.Value()
		if err != nil {
			c.errors.Add(1)
			return
		}
		if f != last {
			if last == nil {
				c.started.Add(1)
			} else if id == 0 {
				c.swaps.Add(1)
			}
			last = f
		}
		if !f.Contains(key(buf, 0, i%cfg.n)) {
			c.falseNegatives.Add(1)
		}
		lookups++
	}
}

func run(cfg config, out io.Writer) error {
	dir := cfg.dir
	if dir == "" {
		d, err := os.MkdirTemp("", "bloomkit-soak-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	path := filepath.Join(dir, "whitelist.bloom")
	took, err := build(path, cfg, 0, 0)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "built %d keys in %v: %.0f keys/s (one core, Builder)\n", cfg.n, took.Round(time.Millisecond), float64(cfg.n)/took.Seconds())
	live, err := mmapstore.NewLive(path, partitioned.OpenReadOnly)
	if err != nil {
		return err
	}
	defer live.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var c counts
	var wg sync.WaitGroup
	for id := range cfg.readers {
		wg.Add(1)
		go func() { defer wg.Done(); serve(ctx, live, cfg, id, &c) }()
	}
	for c.started.Load() < int64(cfg.readers) && c.errors.Load() == 0 { // every reader holds the first build
		time.Sleep(time.Millisecond)
	}
	start := time.Now()
	for pub := 1; pub <= cfg.publishes; pub++ {
		took, err := build(path, cfg, uint64(pub), max(cfg.n/100, 1))
		if err != nil {
			cancel()
			wg.Wait()
			return fmt.Errorf("rebuild %d: %w", pub, err)
		}
		if _, err := live.Reload(); err != nil {
			c.errors.Add(1)
			fmt.Fprintf(out, "reload %d: %v\n", pub, err)
		}
		// The readers move to the new build at their next lookup (reader 0
		// counts the swaps).
		for deadline := time.Now().Add(10 * time.Second); c.swaps.Load() < uint64(pub) && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		fmt.Fprintf(out, "rebuild %d built in %v, published and served\n", pub, took.Round(time.Millisecond))
	}
	time.Sleep(100 * time.Millisecond) // the readers see the last build
	cancel()
	wg.Wait()
	elapsed := time.Since(start)
	fmt.Fprintf(out, "%d readers, %d lookups in %v (%.0f lookups/s), %d swaps seen, %d errors, %d false negatives, peak RSS %s, GOMAXPROCS %d\n",
		cfg.readers, c.lookups.Load(), elapsed.Round(time.Millisecond), float64(c.lookups.Load())/elapsed.Seconds(),
		c.swaps.Load(), c.errors.Load(), c.falseNegatives.Load(), peakRSS(), runtime.GOMAXPROCS(0))
	if c.errors.Load() > 0 || c.falseNegatives.Load() > 0 || c.swaps.Load() < uint64(cfg.publishes) {
		return fmt.Errorf("%d errors, %d false negatives, %d of %d swaps seen", c.errors.Load(), c.falseNegatives.Load(), c.swaps.Load(), cfg.publishes)
	}
	return nil
}

// peakRSS is the process's peak resident set (VmHWM), where Linux says it.
func peakRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
