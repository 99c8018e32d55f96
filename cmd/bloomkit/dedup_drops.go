package main

import (
	"fmt"
	"math"

	"github.com/bloomkit/bloomkit"
)

// dedupDefaultP is dedup's default -p: at it, a filter filled to its
// capacity has dropped, in expectation, under one new line in 10^7 (see
// expectedDrops), where 0.01 dropped 1,782 of 7·10^6 new lines.
const dedupDefaultP = 1e-6

// expectedDrops is the expected number of new lines a filter dropped as
// seen while its count went from start to its count now: each new line is
// tested against the filter as it was then, so the sum of the rates at
// each count. The rate at a fraction x of capacity follows an optimal
// filter's (1-2^-x)^k, k = log2(1/p), scaled so that its value now is the
// rate the filter's fill implies (EstimatedFPR), except for a large file
// still within its capacity, whose fill is not scanned.
func expectedDrops(f bloomkit.Filter, start uint64) float64 {
	capacity, now, p := float64(f.Capacity()), f.Added(), f.TargetFPR()
	if capacity == 0 || now <= start || !(p > 0 && p < 1) {
		return 0
	}
	k := math.Log2(1 / p)
	model := func(x float64) float64 { return math.Pow(1-math.Exp2(-x), k) }
	x0, x1 := float64(start)/capacity, float64(now)/capacity
	const steps = 1000
	sum, dx := 0.0, (x1-x0)/steps
	for i := 0; i < steps; i++ {
		sum += model(x0 + (float64(i)+0.5)*dx)
	}
	drops := sum * dx * capacity
	if f.Bytes() > verifyLimit && now <= f.Capacity() {
		return drops // within capacity the model holds; no O(size) scan of a large file (as capacityWatch.finish)
	}
	if m := model(x1); m > 0 {
		if est := f.EstimatedFPR(); est > 0 {
			drops *= est / m
		}
	}
	return drops
}

// reportDrops prints the expected number of dropped lines on stderr with -v,
// and always once it reaches one line: a loss that sort -u would not have.
func reportDrops(std stdio, verbose bool, f bloomkit.Filter, start uint64) {
	drops := expectedDrops(f, start)
	if !verbose && drops < 1 {
		return
	}
	fmt.Fprintf(std.err, "bloomkit dedup: %d new lines recorded; about %.3g new lines expected dropped as seen (false positives at -p %g, -n %d; a lower -p or a larger -n drops fewer)\n",
		f.Added()-start, drops, f.TargetFPR(), f.Capacity())
}
