package main

import (
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/bloomkit/bloomkit"
)

// countFlag is a key count: 200000, 1e9, 2.5e6 or 1_000_000.
type countFlag struct {
	n   uint64
	set bool
}

func (c *countFlag) String() string { return strconv.FormatUint(c.n, 10) }

func (c *countFlag) Set(s string) error {
	s = strings.ReplaceAll(s, "_", "")
	if u, err := strconv.ParseUint(s, 10, 64); err == nil {
		c.n, c.set = u, true
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || f < 0 || f >= 1<<63 {
		return fmt.Errorf("want a whole number of keys such as 200000 or 1e9")
	}
	c.n, c.set = uint64(f), true
	return nil
}

// sizeFlag is a number of bytes: 65536, 64MB, 64MiB, 1.5GB, 1GiB.
type sizeFlag struct{ bytes uint64 }

func (s *sizeFlag) String() string { return strconv.FormatUint(s.bytes, 10) }

func (s *sizeFlag) Set(v string) error {
	units := []struct {
		suffix string
		mul    float64
	}{{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"TIB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}}
	u := strings.ToUpper(strings.TrimSpace(v))
	mul := 1.0
	for _, x := range units {
		if strings.HasSuffix(u, x.suffix) {
			u, mul = strings.TrimSpace(strings.TrimSuffix(u, x.suffix)), x.mul
			break
		}
	}
	f, err := strconv.ParseFloat(u, 64)
	if err != nil || !(f > 0) || f*mul >= 1<<62 {
		return fmt.Errorf("want a size such as 64MB or 1GiB")
	}
	s.bytes = uint64(f * mul)
	return nil
}

// filterFlags are the flags that size a new filter, and allocate it.
type filterFlags struct {
	variant string
	n       countFlag
	p       float64
	alloc   allocFlags
}

func (ff *filterFlags) define(fs *flag.FlagSet, defaultN uint64) {
	ff.defineRate(fs, defaultN, 0.01)
}

// defineRate is define with a default rate of defaultP.
func (ff *filterFlags) defineRate(fs *flag.FlagSet, defaultN uint64, defaultP float64) {
	ff.n.n = defaultN
	fs.StringVar(&ff.variant, "variant", defaultVariant(), "filter variant: "+variantNames())
	fs.Var(&ff.n, "n", "expected number of keys (forms like 200000 or 1e9)")
	fs.Float64Var(&ff.p, "p", defaultP, "target false-positive rate, in (0,1)")
	ff.alloc.define(fs)
}

func (ff *filterFlags) check() (*variant, error) {
	if !(ff.p > 0 && ff.p < 1) {
		return nil, fmt.Errorf("-p %v: want a rate between 0 and 1, exclusive", ff.p)
	}
	if ff.n.set && ff.n.n == 0 {
		return nil, fmt.Errorf("-n 0: a filter needs a capacity of at least one key")
	}
	v, err := variantByName(ff.variant)
	if err == nil && !ff.n.set && v.defaultN != 0 {
		ff.n.n = v.defaultN // a variant that grows starts small
	}
	return v, err
}

// variantOf is the table entry of f's variant: the one of its file's
// header, else (an in-memory filter) the one -variant names.
func (ff *filterFlags) variantOf(f bloomkit.Filter) *variant {
	if v, ok := variants[variantOf(f)]; ok {
		return v
	}
	v, _ := variantByName(ff.variant)
	return v
}
