// Package sizing holds the formulas that turn what users know (expected items
// n, target false-positive rate p) into a geometry, and the limits every
// variant enforces.
package sizing

import (
	"errors"
	"fmt"
	"math"
)

// Sentinel errors shared by every variant (each re-exports them).
var (
	ErrInvalid  = errors.New("invalid filter parameters")
	ErrTooLarge = errors.New("filter too large")
)

// Limits shared by every variant.
const (
	MaxCells = 1 << 56 // largest m; keeps every byte size far inside int64
	MaxK     = 64      // most probes per key
)

// CheckNP checks expected items n and target rate p.
func CheckNP(n uint64, p float64) error {
	if n == 0 {
		return fmt.Errorf("%w: capacity n must be at least 1", ErrInvalid)
	}
	if math.IsNaN(p) || !(p > 0 && p < 1) {
		return fmt.Errorf("%w: false-positive rate p = %v, want 0 < p < 1", ErrInvalid, p)
	}
	return nil
}

// CheckGeometry checks an explicit m (cells) and k.
func CheckGeometry(m uint64, k uint32) error {
	if m == 0 {
		return fmt.Errorf("%w: m must be at least 1", ErrInvalid)
	}
	if m > MaxCells {
		return fmt.Errorf("%w: m = %d cells, at most %d", ErrTooLarge, m, uint64(MaxCells))
	}
	if k == 0 || k > MaxK {
		return fmt.Errorf("%w: k = %d, want 1..%d", ErrInvalid, k, MaxK)
	}
	return nil
}

// Ln2 and Ln2Sq are ln 2 and (ln 2)^2.
const (
	Ln2   = math.Ln2
	Ln2Sq = math.Ln2 * math.Ln2
)

// Standard returns m (rounded up to whole 64-bit words) and k for a classic
// Bloom filter of n items at rate p: m = -n ln p / (ln 2)^2 and
// k = round(m/n ln 2), computed from the unrounded m.
func Standard(n uint64, p float64) (m uint64, k uint32, err error) {
	if err := CheckNP(n, p); err != nil {
		return 0, 0, err
	}
	mf := -float64(n) * math.Log(p) / Ln2Sq
	if mf > MaxCells-64 {
		return 0, 0, fmt.Errorf("%w: n = %d at p = %v needs %.3g bits, at most %d", ErrTooLarge, n, p, mf, uint64(MaxCells))
	}
	kf := math.Round(mf / float64(n) * Ln2)
	if kf < 1 {
		kf = 1
	}
	if kf > MaxK {
		return 0, 0, fmt.Errorf("%w: p = %v needs k = %v probes, at most %d", ErrInvalid, p, kf, MaxK)
	}
	m = (uint64(math.Ceil(mf)) + 63) &^ 63
	return m, uint32(kf), nil
}

// FPR is the classic false-positive rate of m bits, k probes and n items:
// (1 - e^(-kn/m))^k.
func FPR(m, n uint64, k uint32) float64 {
	return math.Pow(-math.Expm1(-float64(k)*float64(n)/float64(m)), float64(k))
}

// EstimateCount estimates how many distinct keys set x of m bits with k
// probes each (Swamidass and Baldi 2007): -(m/k) ln(1 - x/m). A full filter
// gives +Inf, an empty one 0.
func EstimateCount(x, m uint64, k uint32) float64 {
	if x == 0 { // also for k = 0 (a closed standard filter)
		return 0
	}
	if x >= m {
		return math.Inf(1)
	}
	return -float64(m) / float64(k) * math.Log1p(-float64(x)/float64(m))
}

// CheckMemory reports ErrTooLarge when bytes of heap cannot be had on this
// machine (more than its physical memory), so that a huge in-memory filter is
// an error instead of a fatal out-of-memory crash. File-backed filters are
// limited by the disk instead.
func CheckMemory(bytes uint64) error {
	if bytes > MaxCells/8 {
		return fmt.Errorf("%w: %d bytes, at most %d", ErrTooLarge, bytes, uint64(MaxCells/8))
	}
	if total := totalMemory(); total > 0 && bytes > total {
		return fmt.Errorf("%w: %d bytes exceed this machine's %d bytes of memory; use a file-backed filter", ErrTooLarge, bytes, total)
	}
	return nil
}

// Explicit is the capacity and target rate of an expert's geometry of m
// cells and k probes, the one formula every fixed-size variant uses: n =
// max(1, ⌊m ln 2 / k⌋), the n for which k is the classic optimum, and
// fpr(n), the variant's rate at that load, clamped into (0, 1).
func Explicit(m uint64, k uint32, fpr func(n uint64) float64) (n uint64, p float64) {
	n = uint64(math.Max(1, math.Floor(float64(m)*Ln2/float64(k))))
	p = fpr(n)
	if !(p > 0) {
		p = math.SmallestNonzeroFloat64
	}
	if p >= 1 {
		p = math.Nextafter(1, 0)
	}
	return n, p
}
