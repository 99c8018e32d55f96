package benchmarks

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// WindowFilter is what the window benchmarks need of a filter of the last
// w items: bloomkit's window package and the age-partitioned Bloom filters
// of the peers. Each has an adapter file of its own.
type WindowFilter interface {
	// Add adds key as the newest item of the window.
	Add(key []byte)
	// Contains reports whether key may have been added within the window.
	Contains(key []byte) bool
	// Bytes is the memory of the filter's arrays.
	Bytes() uint64
}

// WindowVariant is one compared filter of the last w items.
type WindowVariant struct {
	Name    string // in benchmark names: "window", "dcrd-apbf"
	Library string // import path
	Design  string // one line: what it is
	Ours    bool
	// New returns a filter of the last w items (at least w: a peer may
	// round up) at rate p.
	New func(w uint64, p float64) (WindowFilter, error)
}

var windowVariants []*WindowVariant

// registerWindow adds v to the compared window filters; each adapter file
// calls it from init.
func registerWindow(v *WindowVariant) {
	windowVariants = append(windowVariants, v)
	slices.SortFunc(windowVariants, func(a, b *WindowVariant) int { return strings.Compare(a.Name, b.Name) })
}

// WindowVariants returns the compared window filters, by name.
func WindowVariants() []*WindowVariant { return windowVariants }

// WindowSizes is the windows the window benchmarks stream through: 1e6,
// or the list in BLOOMKIT_WINDOW_SIZES ("1e6,1e7").
func WindowSizes() ([]uint64, error) {
	s := os.Getenv("BLOOMKIT_WINDOW_SIZES")
	if s == "" {
		return []uint64{1e6}, nil
	}
	var ws []uint64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || v < 1 || v > 1e12 {
			return nil, fmt.Errorf("BLOOMKIT_WINDOW_SIZES: bad window %q", f)
		}
		ws = append(ws, uint64(v))
	}
	return ws, nil
}
