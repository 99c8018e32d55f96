//go:build unix

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bloomkit/bloomkit/mmapstore"
	"github.com/bloomkit/bloomkit/partitioned"
)

// serveConfig is the serving phase: readers goroutines look up keys of the
// key file through a Live of filter while rebuild publishes a new filter of
// the same keys at filter, publishes times.
type serveConfig struct {
	// ctx, when done (a signal), ends the serving phase after the rebuild
	// under way (nil: never).
	ctx       context.Context
	filter    string
	n         uint64 // keys 0..n-1 of generate's key16 kind are in every build
	readers   int
	publishes int
	// rebuild builds the filter of the same keys again and publishes it at
	// filter (the soak runs bloomkit build -o filter).
	rebuild func(pub int) error
	// poll is how often the Live looks for a new file (Watch's interval).
	poll time.Duration
	// swapWait bounds the wait, after a publish, for every reader to serve it.
	swapWait time.Duration
}

// serveResult is what the serving phase counted.
type serveResult struct {
	lookups, falseNegatives, errors uint64
	minSwaps, maxSwaps              uint64 // swaps seen by the reader that saw the fewest, the most
	elapsed                         time.Duration
	firstMissing                    string // the first key that tested absent, if any
}

func (r serveResult) String() string {
	return fmt.Sprintf("%d lookups in %.1f s (%.2f M lookups/s), swaps seen %d (every reader; at most %d), %d errors, %d false negatives",
		r.lookups, r.elapsed.Seconds(), float64(r.lookups)/r.elapsed.Seconds()/1e6, r.minSwaps, r.maxSwaps, r.errors, r.falseNegatives)
}

// serveCounts are shared by the readers: each adds its lookups and swaps
// once, at the end, and its errors and false negatives as they happen.
type serveCounts struct {
	lookups, falseNegatives, errors atomic.Uint64
	swaps                           []atomic.Uint64 // per reader
	started                         atomic.Int64
	firstMissing                    atomic.Pointer[string]
}

// serveKeys is one reader: it looks up keys of the key file, spread over the
// whole of it (key mix(j) % n for its own sequence j, made again with the
// generator's function rather than read from the file), through its own
// Reader until ctx is done. Every key looked up is in every build, so a key
// that tests absent is a false negative.
func serveKeys(ctx context.Context, live *mmapstore.Live[*partitioned.Filter], n uint64, id int, c *serveCounts) {
	r := live.NewReader()
	defer r.Close()
	key := make([]byte, 16)
	var last *partitioned.Filter
	var lookups, swaps uint64
	defer func() { c.lookups.Add(lookups); c.swaps[id].Store(swaps) }()
	for j := uint64(id) << 40; ; j++ {
		if lookups&1023 == 0 && ctx.Err() != nil {
			return
		}
		f, err := r.Value()
		if err != nil {
			c.errors.Add(1)
			return
		}
		if f != last {
			if last == nil {
				c.started.Add(1)
			} else {
				swaps++
				c.swaps[id].Store(swaps)
			}
			last = f
		}
		putHex(key, mix(mix(j)%n))
		if !f.Contains(key) {
			if c.falseNegatives.Add(1) == 1 {
				s := string(key)
				c.firstMissing.Store(&s)
			}
		}
		lookups++
	}
}

// serve runs the serving phase: it serves cfg.filter through a Live to
// cfg.readers goroutines of lookups while cfg.rebuild publishes it again
// cfg.publishes times (a Watch of the Live picks each new file up), and
// counts lookups, errors (of Value, of Reload and of the rebuilds), false
// negatives and the swaps each reader saw.
func serve(cfg serveConfig, out io.Writer) (serveResult, error) {
	live, err := mmapstore.NewLive(cfg.filter, partitioned.OpenReadOnly)
	if err != nil {
		return serveResult{}, err
	}
	defer live.Close()
	c := &serveCounts{swaps: make([]atomic.Uint64, cfg.readers)}
	if cfg.ctx == nil {
		cfg.ctx = context.Background()
	}
	ctx, cancel := context.WithCancel(cfg.ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		live.Watch(ctx, cfg.poll, func(err error) {
			c.errors.Add(1)
			fmt.Fprintf(out, "    reload: %v\n", err)
		})
	}()
	for id := range cfg.readers {
		wg.Add(1)
		go func() { defer wg.Done(); serveKeys(ctx, live, cfg.n, id, c) }()
	}
	for c.started.Load() < int64(cfg.readers) && c.errors.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	start := time.Now()
	for pub := 1; pub <= cfg.publishes && ctx.Err() == nil; pub++ {
		if err := cfg.rebuild(pub); err != nil {
			c.errors.Add(1)
			fmt.Fprintf(out, "    rebuild %d: %v\n", pub, err)
			continue
		}
		deadline := time.Now().Add(cfg.swapWait)
		for minSwaps(c) < uint64(pub) && time.Now().Before(deadline) && ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		fmt.Fprintf(out, "    publish %d: served by %d of %d readers\n", pub, readersAt(c, uint64(pub)), cfg.readers)
	}
	cancel()
	wg.Wait()
	res := serveResult{
		lookups: c.lookups.Load(), falseNegatives: c.falseNegatives.Load(), errors: c.errors.Load(),
		minSwaps: minSwaps(c), elapsed: time.Since(start),
	}
	for i := range c.swaps {
		res.maxSwaps = max(res.maxSwaps, c.swaps[i].Load())
	}
	if p := c.firstMissing.Load(); p != nil {
		res.firstMissing = *p
	}
	return res, nil
}

func minSwaps(c *serveCounts) uint64 {
	m := c.swaps[0].Load()
	for i := range c.swaps {
		m = min(m, c.swaps[i].Load())
	}
	return m
}

func readersAt(c *serveCounts, swaps uint64) int {
	k := 0
	for i := range c.swaps {
		if c.swaps[i].Load() >= swaps {
			k++
		}
	}
	return k
}

// check turns the counts into the soak's verdict: no error, no false
// negative, and every reader saw every publish.
func (r serveResult) check(publishes int) error {
	var bad []string
	if r.errors > 0 {
		bad = append(bad, fmt.Sprintf("%d errors", r.errors))
	}
	if r.falseNegatives > 0 {
		bad = append(bad, fmt.Sprintf("%d false negatives (the first: %s)", r.falseNegatives, r.firstMissing))
	}
	if r.minSwaps < uint64(publishes) {
		bad = append(bad, fmt.Sprintf("a reader saw %d of %d swaps", r.minSwaps, publishes))
	}
	if len(bad) > 0 {
		return fmt.Errorf("serving: %s", strings.Join(bad, ", "))
	}
	return nil
}

// peakRSS is this process's peak resident set in MiB (VmHWM), or -1 where
// Linux does not say it.
func peakRSS() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb float64
			if _, err := fmt.Sscanf(strings.TrimSpace(v), "%f kB", &kb); err == nil {
				return kb / 1024
			}
		}
	}
	return -1
}
