package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// Capacity. A filter filled past the capacity it was sized for answers
// "present" more and more often, and at 100% fill for every key. The
// commands that add keys (build, add, dedup, union) watch the count of
// distinct keys: the moment it passes the capacity they print one warning
// line on stderr, and at the end they compare the estimated rate (from the
// fill) with the target. With -strict they refuse the first key that would
// take the filter past its capacity (exit 2; build publishes nothing).
// Scalable and growing filters grow past their capacity by design and are
// not watched.

// rateSlack is how far above the target the rate estimated from the fill
// may be before a command warns: at capacity the estimate scatters around
// the target by a few percent for any but tiny filters, and a blocked
// (partitioned) filter sits somewhat above the standard formula.
const rateSlack = 1.5

// errOverCapacity is the error of -strict.
var errOverCapacity = errors.New("the filter is at its capacity")

// strictFlag defines -strict on fs.
func strictFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("strict", false, "fail (exit 2) instead of warning when the keys would take the filter past its capacity; the keys before are kept (build and union publish nothing)")
}

// capacityWatch follows the distinct keys a command adds to one filter.
type capacityWatch struct {
	cmd, path string
	w         io.Writer
	capacity  uint64
	count     uint64 // distinct keys, as the filter counts them
	strict    bool
	off       bool // scalable, growing: grows instead
	warned    bool
}

// newCapacityWatch follows the adds to f, the file at path. A file a
// server reserved NONSCALING (mmapstore.FlagFullRefuses) is -strict
// whatever the flag: it refuses new keys past its capacity in the tool as
// in the server.
func newCapacityWatch(std stdio, cmd, path string, f bloomkit.Filter, strict bool) *capacityWatch {
	if h, err := mmapstore.ReadHeader(path); err == nil && h.FullRefuses() {
		strict = true
	}
	return &capacityWatch{cmd: cmd, path: path, w: std.err, capacity: f.Capacity(), count: f.Added(),
		strict: strict, off: grows(f)}
}

// before is called before key is added to f: with -strict, a key not in f
// when f holds its capacity is refused.
func (c *capacityWatch) before(f bloomkit.Filter, key []byte) error {
	if c.off || !c.strict || c.count < c.capacity || f.Contains(key) {
		return nil
	}
	return fmt.Errorf("%s: %w of %d keys: refused the key %q and the rest (-strict; build with a larger -n)",
		c.path, errOverCapacity, c.capacity, truncateKey(key))
}

// added is called after a key was added, isNew as the filter said.
func (c *capacityWatch) added(isNew bool) {
	if isNew {
		c.addedNew(1)
	}
}

// addedNew is called after keys were added of which n were new.
func (c *capacityWatch) addedNew(n uint64) {
	if n == 0 {
		return
	}
	c.count += n
	if c.count > c.capacity && !c.warned && !c.off {
		c.warned = true
		fmt.Fprintf(c.w, "bloomkit %s: warning: %s: more keys than its capacity of %d: its false-positive rate climbs above the target from here on (build with a larger -n; -strict refuses instead)\n",
			c.cmd, c.path, c.capacity)
	}
}

// finish checks the rate f's fill implies against its target, once the
// keys are in (O(size of the filter): skipped for a filter larger than 64
// MiB within its capacity by count), and warns if it is past it and no
// warning was printed yet.
func (c *capacityWatch) finish(f bloomkit.Filter) {
	if c.off || c.warned { // said already, the moment it happened
		return
	}
	if f.Bytes() > verifyLimit && c.count <= c.capacity {
		return // a few keys added to a large file: no O(size) scan for them
	}
	if w := rateWarning(f); w != "" {
		fmt.Fprintf(c.w, "bloomkit %s: warning: %s: %s\n", c.cmd, c.path, w)
	}
}

// fillFacts are what a filter's fill says of it, each read once (every
// one but the counts is O(size of the filter)).
type fillFacts struct {
	fill, est, target float64
	added, capacity   uint64
}

func fillOf(f bloomkit.Filter) fillFacts {
	return fillFacts{fill: f.FillRatio(), est: f.EstimatedFPR(), target: f.TargetFPR(), added: f.Added(), capacity: f.Capacity()}
}

// saturated: every cell is set, so every key tests present.
func (x fillFacts) saturated() bool { return x.fill >= 1 }

// warning says how far past its capacity or its target rate the filter
// is, or "".
func (x fillFacts) warning() string {
	if x.saturated() {
		return "saturated: every cell is set, so every key tests present (rebuild with a larger -n)"
	}
	if x.est <= x.target*rateSlack && x.added <= x.capacity {
		return ""
	}
	return fmt.Sprintf("over capacity: %d keys added for a capacity of %d; estimated false-positive rate %.3g, %.1f times the target %g (rebuild with a larger -n)",
		x.added, x.capacity, x.est, x.est/x.target, x.target)
}

// rateWarning is fillOf(f).warning().
func rateWarning(f bloomkit.Filter) string { return fillOf(f).warning() }

// approxCount prints f's estimated count; a full filter has none (the
// library answers math.MaxUint64 for it), and that is said in words.
func approxCount(f bloomkit.Filter) string {
	c := f.ApproxCount()
	if c == math.MaxUint64 {
		return "more than the filter can estimate: every cell is set"
	}
	return strconv.FormatUint(c, 10)
}

// truncateKey shortens a key for a message.
func truncateKey(key []byte) string {
	if len(key) > 64 {
		return string(key[:64]) + "..."
	}
	return string(key)
}
