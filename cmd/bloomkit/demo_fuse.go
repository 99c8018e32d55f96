package main

import (
	"fmt"
	"io"
	"path/filepath"
	"time"
)

// demoFuse builds a fuse filter of the demo's n keys (a static set, built
// once), maps it and measures it beside the standard filter: the space and
// rate of docs/fuse.md on the user's machine. Its rate is 2^-8 for p ≥ 2^-8
// and 2^-16 below (down to 2^-16; a smaller p skips it).
func demoFuse(w io.Writer, dir string, n uint64, p, standardBitsPerKey float64, trials uint64) error {
	sv := staticDefault().static
	bits, err := sv.fingerprintBits(p)
	if err != nil {
		fmt.Fprintf(w, "\nfuse filter: skipped, p = %g is below what its 16-bit fingerprints give (2^-16)\n", p)
		return nil
	}
	path := filepath.Join(dir, "demo-fuse.bloom")
	buf := make([]byte, 0, 64)
	start := time.Now()
	b, err := sv.newBuilder(path, p, sv.defaultMemory, "", nil)
	if err != nil {
		return err
	}
	err = demoLoop(n, func(i uint64) {
		if err == nil {
			err = b.Add(demoKey(buf, "user:", i))
		}
	})
	if err == nil {
		err = interrupted()
	}
	if err != nil {
		b.Abort()
		return err
	}
	if err := b.Publish(); err != nil {
		return err
	}
	build := time.Since(start)
	f, err := openFile(path, true)
	if err != nil {
		return err
	}
	defer f.Close()
	var missing, fp uint64
	hitStart := time.Now()
	if err := demoLoop(n, func(i uint64) {
		if !f.Contains(demoKey(buf, "user:", i)) {
			missing++
		}
	}); err != nil {
		return err
	}
	hit := time.Since(hitStart)
	missStart := time.Now()
	if err := demoLoop(trials, func(i uint64) {
		if f.Contains(demoKey(buf, "other:", i)) {
			fp++
		}
	}); err != nil {
		return err
	}
	miss := time.Since(missStart)
	per := func(d time.Duration, count uint64) float64 { return float64(d.Nanoseconds()) / float64(count) }
	fmt.Fprintf(w, "\nthe same keys as a fuse filter (static: built once, no Add; docs/fuse.md)\n")
	fmt.Fprintf(w, "  geometry         %d-bit fingerprints, %.2f bits per key (standard at its rate would take %.2f)\n",
		bits, float64(f.Bits())/float64(max(f.Added(), 1)), standardBitsPerKey)
	fmt.Fprintf(w, "  build            %v (%d shards, published atomically)\n", build.Round(time.Millisecond), f.(interface{ Shards() int }).Shards())
	fmt.Fprintf(w, "  lookup, present  %.1f ns/key\n", per(hit, n))
	fmt.Fprintf(w, "  lookup, absent   %.1f ns/key\n", per(miss, trials))
	fmt.Fprintf(w, "  false negatives  %d of %d added keys\n", missing, n)
	fmt.Fprintf(w, "  rate             fixed %.4g (2^-%d), measured %.4g\n", f.EstimatedFPR(), bits, float64(fp)/float64(trials))
	if missing > 0 {
		return fmt.Errorf("%d false negatives in the fuse filter: it is broken", missing)
	}
	return nil
}

// fuseRate is the rate a fuse filter built for p has: 2^-8 or 2^-16.
func fuseRate(p float64) float64 {
	if bits, err := staticDefault().static.fingerprintBits(p); err == nil && bits == 16 {
		return 1.0 / 65536
	}
	return 1.0 / 256
}
