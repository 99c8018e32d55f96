package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/bloomkit/bloomkit/standard"
)

func demoCommand(fs *flag.FlagSet, std stdio) func([]string) error {
	n := fs.Uint64("n", 1_000_000, "number of generated keys to add")
	p := fs.Float64("p", 0.01, "target false-positive rate, in (0,1)")
	trials := fs.Uint64("trials", 1_000_000, "absent keys to query for the measured false-positive rate")
	dir := fs.String("dir", "", "folder for the filter file (default: a new temporary folder, removed afterwards)")
	return func(args []string) error {
		if len(args) > 0 {
			return fmt.Errorf("unexpected arguments %q", args)
		}
		return demo(std.out, *n, *p, *trials, *dir)
	}
}

// demoKey writes the i-th generated key of a set into buf.
func demoKey(buf []byte, set string, i uint64) []byte {
	return strconv.AppendUint(append(buf[:0], set...), i, 10)
}

func demo(w io.Writer, n uint64, p float64, trials uint64, dir string) error {
	if trials == 0 {
		return fmt.Errorf("-trials must be at least 1")
	}
	if dir == "" {
		tmp, err := os.MkdirTemp("", "bloomkit-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	path := filepath.Join(dir, "demo.bloom")
	buf := make([]byte, 0, 64)

	// Build into a temporary file beside the target and publish it.
	start := time.Now()
	b, err := standard.CreateTemp(path, n, p)
	if err != nil {
		return err
	}
	addStart := time.Now()
	for i := uint64(0); i < n; i++ {
		b.Add(demoKey(buf, "user:", i))
	}
	addTime := time.Since(addStart)
	if err := b.Publish(); err != nil {
		return err
	}
	buildTime := time.Since(start)

	// Map it read-only, as a server would at startup.
	openStart := time.Now()
	f, err := standard.OpenReadOnly(path)
	if err != nil {
		return err
	}
	openTime := time.Since(openStart)
	defer f.Close()

	hitStart := time.Now()
	var missing uint64
	for i := uint64(0); i < n; i++ {
		if !f.Contains(demoKey(buf, "user:", i)) {
			missing++
		}
	}
	hitTime := time.Since(hitStart)

	missStart := time.Now()
	var fp uint64
	for i := uint64(0); i < trials; i++ {
		if f.Contains(demoKey(buf, "other:", i)) {
			fp++
		}
	}
	missTime := time.Since(missStart)

	verifyStart := time.Now()
	verifyErr := f.Verify()
	verifyTime := time.Since(verifyStart)
	st, err := os.Stat(path)
	if err != nil {
		return err
	}

	rate := float64(fp) / float64(trials)
	// 95% interval of the measured rate (normal approximation of the binomial).
	half := 1.96 * math.Sqrt(rate*(1-rate)/float64(trials))
	per := func(d time.Duration, count uint64) float64 { return float64(d.Nanoseconds()) / float64(count) }

	fmt.Fprintf(w, "bloomkit demo: standard filter, n = %d keys, target p = %g\n", n, p)
	fmt.Fprintf(w, "  file             %s (%.1f MB, mapped read-only)\n", path, float64(st.Size())/1e6)
	fmt.Fprintf(w, "  geometry         m = %d bits, k = %d, %.2f bits per key\n", f.Bits(), f.K(), float64(f.Bits())/float64(n))
	fmt.Fprintf(w, "  build            %v (add %.1f ns/key, then publish: checksum, fsync, rename)\n", buildTime.Round(time.Millisecond), per(addTime, n))
	fmt.Fprintf(w, "  open (mmap)      %v\n", openTime.Round(time.Microsecond))
	fmt.Fprintf(w, "  lookup, present  %.1f ns/key\n", per(hitTime, n))
	fmt.Fprintf(w, "  lookup, absent   %.1f ns/key\n", per(missTime, trials))
	fmt.Fprintf(w, "  verify checksum  %v (%v)\n", verifyTime.Round(time.Microsecond), okOr(verifyErr))
	fmt.Fprintf(w, "  false negatives  %d of %d added keys\n", missing, n)
	fmt.Fprintf(w, "  false positives  %d of %d absent keys\n", fp, trials)
	fmt.Fprintf(w, "  rate             target %.4g, measured %.4g ± %.2g (95%%), %.3f x target\n", p, rate, half, rate/p)
	fmt.Fprintf(w, "  estimated count  %d (from the fill, %.1f%% of bits set)\n", f.ApproxCount(), 100*f.FillRatio())
	if missing > 0 {
		return fmt.Errorf("%d false negatives: the filter is broken", missing)
	}
	if verifyErr != nil {
		return verifyErr
	}
	return nil
}

func okOr(err error) string {
	if err != nil {
		return err.Error()
	}
	return "ok"
}
