package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime/debug"

	"github.com/zeebo/xxh3"

	"github.com/bloomkit/bloomkit/standard"
)

func init() {
	commands["common"] = command{
		summary: "print the lines common to A and B, exactly (those comm -12 prints for the sorted files), for files much larger than memory",
		usage:   "A B",
		setup:   commonCommand,
	}
}

// common finds the lines of B present in A without holding either file:
//
//  1. count A's lines, and build a Bloom filter of them in half the memory
//     budget;
//  2. stream B; lines the filter may contain are candidates, written in B's
//     order to a temporary file (a line of B absent from A is dropped here,
//     except for the filter's false positives);
//  3. verify: candidates are split by hash into as many buckets as it takes
//     for one bucket's exact counts to fit in the other half of the budget;
//     for each bucket, count its candidates, stream A and count those A
//     has;
//  4. print the confirmed candidates in B's order: a line that occurs a
//     times in A and b times in B is printed min(a, b) times, the lines
//     comm -12 prints for the sorted files.
//
// The answer is exact: the filter only narrows what step 3 checks.
func commonCommand(fs *flag.FlagSet) func([]string) error {
	mem := sizeFlag{bytes: 256 << 20}
	fs.Var(&mem, "mem", "memory budget (forms like 64MB or 1GiB)")
	tmpDir := fs.String("tmp", "", "folder for the candidate file (default: the system's temporary folder)")
	maxLine := fs.Int("max-line", defaultMaxLine, "longest line accepted, in bytes")
	return func(args []string) error {
		if len(args) != 2 {
			return fmt.Errorf("want two files A and B, got %d arguments", len(args))
		}
		if mem.bytes < 1<<20 {
			return fmt.Errorf("-mem %d: at least 1MiB", mem.bytes)
		}
		// The Go heap is held near the budget; the rest is the garbage
		// collector's headroom.
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(int64(mem.bytes)))
		w := bufio.NewWriterSize(os.Stdout, 256<<10)
		err := common(args[0], args[1], mem.bytes, *tmpDir, *maxLine, w)
		return errors.Join(err, w.Flush())
	}
}

func common(pathA, pathB string, budget uint64, tmpDir string, maxLine int, out io.Writer) error {
	a := newLineSource([]string{pathA}, maxLine, "common: counting A")
	nA, err := a.count()
	if err != nil {
		return err
	}
	if nA == 0 {
		return nil
	}
	// Step 1: the filter takes up to half the budget.
	m := min(budget/2*8, uint64(math.Ceil(float64(nA)*-math.Log(1e-6)/(math.Ln2*math.Ln2))))
	k := uint32(max(1, math.Round(float64(m)/float64(nA)*math.Ln2)))
	f, err := standard.NewWithSize(m, min(k, 30))
	if err != nil {
		return err
	}
	a.label = "common: filtering A"
	if err := a.each(func(line []byte) error { f.Add(line); return nil }); err != nil {
		return err
	}

	// Step 2: candidates of B, in order.
	cand, err := os.CreateTemp(tmpDir, "bloomkit-common-*")
	if err != nil {
		return err
	}
	defer os.Remove(cand.Name())
	defer cand.Close()
	cw := bufio.NewWriterSize(cand, 256<<10)
	var nCand, candBytes uint64
	b := newLineSource([]string{pathB}, maxLine, "common: scanning B")
	err = b.each(func(line []byte) error {
		if f.Contains(line) {
			nCand++
			candBytes += uint64(len(line))
			cw.Write(line)
			return cw.WriteByte('\n')
		}
		return nil
	})
	if err := errors.Join(err, cw.Flush()); err != nil {
		return err
	}
	f = nil // the filter's memory goes back for step 3
	if nCand == 0 {
		return nil
	}

	// Step 3: exact check, bucket by bucket. A Go map entry costs about the
	// key's bytes plus 100 bytes of string header, counts, slot and growth.
	half := budget / 2
	need := candBytes + 100*nCand
	buckets := max(1, (need+half-1)/half)
	confirmed := make([]uint64, (nCand+63)/64) // bit i: candidate i is in A
	candSrc := newLineSource([]string{cand.Name()}, maxLine, "common: candidates")
	candSrc.progress = false
	type counts struct{ inA, inB, printed uint32 }
	for bucket := uint64(0); bucket < buckets; bucket++ {
		inBucket := func(line []byte) bool { return buckets == 1 || xxh3.HashSeed(line, 0x636f6d6d)%buckets == bucket }
		set := make(map[string]*counts)
		if err := candSrc.each(func(line []byte) error {
			if inBucket(line) {
				if c := set[string(line)]; c != nil {
					c.inB++
				} else {
					set[string(line)] = &counts{inB: 1}
				}
			}
			return nil
		}); err != nil {
			return err
		}
		a.label = fmt.Sprintf("common: verifying (%d/%d)", bucket+1, buckets)
		if err := a.each(func(line []byte) error {
			if inBucket(line) {
				if c := set[string(line)]; c != nil {
					c.inA++
				}
			}
			return nil
		}); err != nil {
			return err
		}
		// A line occurring a times in A and b times in B is common
		// min(a, b) times, as comm -12 of the sorted files counts it: its
		// first min(a, b) occurrences in B are confirmed.
		i := uint64(0)
		if err := candSrc.each(func(line []byte) error {
			if inBucket(line) {
				if c := set[string(line)]; c.printed < c.inA {
					c.printed++
					confirmed[i/64] |= 1 << (i % 64)
				}
			}
			i++
			return nil
		}); err != nil {
			return err
		}
	}

	// Step 4: print in B's order.
	i := uint64(0)
	return candSrc.each(func(line []byte) error {
		if confirmed[i/64]&(1<<(i%64)) != 0 {
			if _, err := out.Write(line); err != nil {
				return err
			}
			if _, err := out.Write([]byte{'\n'}); err != nil {
				return err
			}
		}
		i++
		return nil
	})
}
