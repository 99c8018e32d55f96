package benchmarks

import (
	"github.com/bloomkit/bloomkit/window"
)

// windowFilter is bloomkit's window package: a ring of 8 generations in
// one byte array, one byte a probe for every generation.
type windowFilter struct{ f *window.Filter }

func (w windowFilter) Add(key []byte)           { w.f.Add(key) }
func (w windowFilter) Contains(key []byte) bool { return w.f.Contains(key) }
func (w windowFilter) Bytes() uint64            { return w.f.Bytes() }

func init() {
	registerWindow(&WindowVariant{
		Name:    "window",
		Library: "github.com/bloomkit/bloomkit/window",
		Design:  "ring of 8 generations, bit j of each position's byte in generation j; w/7 items at p/8 each; lock-free",
		Ours:    true,
		New: func(w uint64, p float64) (WindowFilter, error) {
			f, err := window.New(w, p)
			if err != nil {
				return nil, err
			}
			return windowFilter{f}, nil
		},
	})
}

// windowBuilder adds through a window.Builder: plain stores, for the one
// goroutine that streams keys through a filter alone (a dedup command).
// Lookups are the filter's own.
type windowBuilder struct {
	windowFilter
	b *window.Builder
}

func (w windowBuilder) Add(key []byte) { w.b.Add(key) }

func init() {
	registerWindow(&WindowVariant{
		Name:    "window-builder",
		Library: "github.com/bloomkit/bloomkit/window",
		Design:  "window, filled through a Builder (plain stores, not safe alongside other use); lookups as window",
		Ours:    true,
		New: func(w uint64, p float64) (WindowFilter, error) {
			f, err := window.New(w, p)
			if err != nil {
				return nil, err
			}
			return windowBuilder{windowFilter{f}, f.Builder()}, nil
		},
	})
}
