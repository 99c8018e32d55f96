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

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/mmapstore"
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

// demoRun is what demo measured.
type demoRun struct {
	path                        string
	size                        int64
	bits                        uint64
	k                           uint32
	approx                      string
	fill                        float64
	missing, fp                 uint64
	addTime, buildTime          time.Duration
	openTime, hitTime, missTime time.Duration
	verifyTime                  time.Duration
	verifyErr                   error
}

// demoLoop calls fn for i in [0, n), and stops with the signal's error
// once a caught signal asks the command to stop.
func demoLoop(n uint64, fn func(i uint64)) error {
	for i := uint64(0); i < n; i++ {
		if i&(1<<16-1) == 0 {
			if err := interrupted(); err != nil {
				return err
			}
		}
		fn(i)
	}
	return nil
}

// demo builds, maps and measures a standard filter of n generated keys. A
// signal stops it between steps and in its loops; the temporary folder is
// removed on every path.
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
	r := demoRun{path: filepath.Join(dir, "demo.bloom")}
	if err := r.build(n, p); err != nil {
		return err
	}
	if err := r.measure(n, trials); err != nil {
		return err
	}
	r.print(w, n, p, trials)
	if r.missing > 0 {
		return fmt.Errorf("%d false negatives: the filter is broken", r.missing)
	}
	if r.verifyErr != nil {
		return r.verifyErr
	}
	// A fuse filter at the rate of its fingerprints, against a standard
	// filter sized for that same rate.
	fp := fuseRate(p)
	size, err := variants[defaultVariant()].fileBytes(n, fp)
	if err != nil {
		return err
	}
	return demoFuse(w, dir, n, p, float64(8*(size-mmapstore.HeaderSize))/float64(n), trials)
}

// build builds into a temporary file beside the target and publishes it.
func (r *demoRun) build(n uint64, p float64) error {
	buf := make([]byte, 0, 64)
	start := time.Now()
	nf, err := variants[defaultVariant()].create(r.path, n, p, true)
	if err != nil {
		return err
	}
	b := nf.(interface {
		bloomkit.Adder
		bloomkit.Publisher
	})
	addStart := time.Now()
	if err := demoLoop(n, func(i uint64) { b.Add(demoKey(buf, "user:", i)) }); err != nil {
		b.Close() // discards the temporary file
		return err
	}
	r.addTime = time.Since(addStart)
	if err := interrupted(); err != nil {
		b.Close()
		return err
	}
	if err := b.Publish(); err != nil {
		return err
	}
	r.buildTime = time.Since(start)
	return nil
}

// measure maps the file read-only, as a server would at startup, and
// times lookups and the checksum.
func (r *demoRun) measure(n, trials uint64) error {
	buf := make([]byte, 0, 64)
	openStart := time.Now()
	f, err := openFile(r.path, true)
	if err != nil {
		return err
	}
	r.openTime = time.Since(openStart)
	defer f.Close()
	hitStart := time.Now()
	err = demoLoop(n, func(i uint64) {
		if !f.Contains(demoKey(buf, "user:", i)) {
			r.missing++
		}
	})
	if err != nil {
		return err
	}
	r.hitTime = time.Since(hitStart)
	missStart := time.Now()
	err = demoLoop(trials, func(i uint64) {
		if f.Contains(demoKey(buf, "other:", i)) {
			r.fp++
		}
	})
	if err != nil {
		return err
	}
	r.missTime = time.Since(missStart)
	verifyStart := time.Now()
	r.verifyErr = f.Verify()
	r.verifyTime = time.Since(verifyStart)
	st, err := os.Stat(r.path)
	if err != nil {
		return err
	}
	r.size, r.bits, r.k = st.Size(), f.Bits(), f.K()
	r.approx, r.fill = approxCount(f), f.FillRatio()
	return nil
}

func (r *demoRun) print(w io.Writer, n uint64, p float64, trials uint64) {
	rate := float64(r.fp) / float64(trials)
	// 95% interval of the measured rate (normal approximation of the binomial).
	half := 1.96 * math.Sqrt(rate*(1-rate)/float64(trials))
	per := func(d time.Duration, count uint64) float64 { return float64(d.Nanoseconds()) / float64(count) }

	fmt.Fprintf(w, "bloomkit demo: standard filter, n = %d keys, target p = %g\n", n, p)
	fmt.Fprintf(w, "  file             %s (%.1f MB, mapped read-only)\n", r.path, float64(r.size)/1e6)
	fmt.Fprintf(w, "  geometry         m = %d bits, k = %d, %.2f bits per key\n", r.bits, r.k, float64(r.bits)/float64(n))
	fmt.Fprintf(w, "  build            %v (add %.1f ns/key, then publish: checksum, fsync, rename)\n", r.buildTime.Round(time.Millisecond), per(r.addTime, n))
	fmt.Fprintf(w, "  open (mmap)      %v\n", r.openTime.Round(time.Microsecond))
	fmt.Fprintf(w, "  lookup, present  %.1f ns/key\n", per(r.hitTime, n))
	fmt.Fprintf(w, "  lookup, absent   %.1f ns/key\n", per(r.missTime, trials))
	fmt.Fprintf(w, "  verify checksum  %v (%v)\n", r.verifyTime.Round(time.Microsecond), okOr(r.verifyErr))
	fmt.Fprintf(w, "  false negatives  %d of %d added keys\n", r.missing, n)
	fmt.Fprintf(w, "  false positives  %d of %d absent keys\n", r.fp, trials)
	fmt.Fprintf(w, "  rate             target %.4g, measured %.4g ± %.2g (95%%), %.3f x target\n", p, rate, half, rate/p)
	fmt.Fprintf(w, "  estimated count  %s (from the fill, %.1f%% of bits set)\n", r.approx, 100*r.fill)
}

func okOr(err error) string {
	if err != nil {
		return err.Error()
	}
	return "ok"
}
