package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/mmapstore"
)

func infoCommand(fs *flag.FlagSet, std stdio) func([]string) error {
	var vf verifyFlags
	vf.define(fs)
	return func(args []string) error {
		if len(args) != 1 {
			return fmt.Errorf("want exactly one FILE, got %d arguments", len(args))
		}
		h, err := mmapstore.ReadHeader(args[0])
		if err != nil {
			return err
		}
		f, err := openFile(args[0], true)
		if err != nil {
			return err
		}
		defer f.Close()
		st, err := os.Stat(args[0])
		if err != nil {
			return err
		}
		state, verr := vf.check(f, args[0])
		var checksum string
		switch {
		case verr != nil:
			checksum = "DAMAGED: the payload does not match its checksum (see below)"
		case state == payloadHistoryDamaged:
			checksum = "current, and the payload matches it (checked now); the history log is DAMAGED ('bloomkit verify' says where): adds and growth are refused"
		case state == payloadVerified:
			checksum = "current, and the payload matches it (checked now)"
		case state == payloadStale || !h.ChecksumCurrent():
			checksum = "not current (open for writing, or not closed cleanly)"
		case state == payloadUnchecked:
			checksum = "current (recorded at close), payload not checked: larger than 64 MiB ('bloomkit verify' or info -verify reads it all)"
		default:
			checksum = "current (recorded at close), payload not checked (-no-verify)"
		}
		_, static := f.(bloomkit.Adder)
		static = !static
		cells := "bits"
		switch {
		case static:
			cells = fmt.Sprintf("%d-bit fingerprints", h.CellBits)
		case h.CellBits > 1:
			cells = fmt.Sprintf("%d-bit counters", h.CellBits)
		}
		fmt.Fprintf(std.out, "file           %s\n", args[0])
		fmt.Fprintf(std.out, "variant        %s\n", h.Variant)
		fmt.Fprintf(std.out, "format         version %d, hash %d (%s), seed %d\n", h.Version, h.Scheme, bloomkit.Scheme(h.Scheme), h.Seed)
		fmt.Fprintf(std.out, "geometry       m = %d %s, k = %d", h.M, cells, f.K())
		if h.BlockBits > 0 {
			fmt.Fprintf(std.out, ", %d-bit blocks", h.BlockBits)
		}
		fmt.Fprintf(std.out, ", %.2f bits per key at capacity\n", float64(f.Bytes()*8)/float64(max(f.Capacity(), 1)))
		fmt.Fprintf(std.out, "capacity       %d keys at target p = %g\n", f.Capacity(), f.TargetFPR())
		if h.FullRefuses() {
			fmt.Fprintf(std.out, "when full      new keys refused (reserved NONSCALING: 'bloomkit add' and 'serve' refuse them past the capacity)\n")
		}
		if g, ok := f.(grower); ok {
			// A growing filter's capacity is its table's; it was made for
			// fewer and rebuilt Expansion times larger at each growth.
			fmt.Fprintf(std.out, "initial        %d keys, grows %d-fold at each rebuild\n", g.InitialCapacity(), g.Expansion())
			n, _ := g.Rebuilds()
			fmt.Fprintf(std.out, "rebuilds       %d\n", n)
			fmt.Fprintf(std.out, "history        %d bytes (%s, every key added)\n", g.LogBytes(), g.HistoryPath())
		}
		if static {
			fmt.Fprintf(std.out, "keys           %d distinct, a static set: the rate is fixed by the fingerprints\n", f.Added())
		} else {
			fmt.Fprintf(std.out, "added          %d (estimated from the fill: %s)\n", f.Added(), approxCount(f))
			facts := fillOf(f)
			fmt.Fprintf(std.out, "fill           %.2f%% of cells set\n", 100*facts.fill)
			fmt.Fprintf(std.out, "estimated p    %.4g (from the fill)\n", facts.est)
			fmt.Fprintf(std.out, "state          %s\n", fillState(facts, f))
		}
		fmt.Fprintf(std.out, "size on disk   %d bytes (payload %d)\n", st.Size(), f.Bytes())
		fmt.Fprintf(std.out, "checksum       %s\n", checksum)
		return verr
	}
}

// fillState says whether f holds what it was sized for: within capacity,
// over it, or saturated (every cell set: every key tests present).
func fillState(x fillFacts, f bloomkit.Filter) string {
	w := x.warning()
	switch {
	case x.saturated():
		return "SATURATED: every cell is set, so every key tests present; its answers mean nothing (rebuild with a larger -n)"
	case grows(f):
		return fmt.Sprintf("grows as keys are added (%s)", variantOf(f))
	case w != "":
		return "OVER CAPACITY: " + w
	}
	return "within capacity"
}

// grower is what info shows of a filter that grows by rebuilding (growing).
type grower interface {
	InitialCapacity() uint64
	Expansion() uint64
	Rebuilds() (int, time.Duration)
	LogBytes() uint64
	HistoryPath() string
}
