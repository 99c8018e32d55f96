package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/bloomkit/bloomkit/mmapstore"
)

// repair-log is the operator's answer to a damaged digest log, as
// redis-check-aof --fix is Redis's: a log whose records stop before its
// end (4 bytes overwritten in its middle, a bad sector) is refused whole
// by every command and by the server, and this command cuts it at the end
// of the last intact record before the damage, saying what that drops.

func repairLogCommand(fs *flag.FlagSet, std stdio) func([]string) error {
	dryRun := fs.Bool("n", false, "say what would be cut and change nothing (exit 1 when something would be)")
	salvage := fs.Bool("salvage", false, "keep the intact records after the damage too (written again after the last intact record before it): only the damaged records' digests are lost")
	return func(args []string) error {
		if len(args) != 1 {
			return fmt.Errorf("want exactly one FILE, got %d arguments", len(args))
		}
		path, lp := logOf(args[0])
		rep, err := mmapstore.CheckLog(lp)
		if err != nil && !errors.Is(err, mmapstore.ErrLogCorrupt) {
			return err // unreadable, or its header damaged: nothing to cut by
		}
		if rep.Cut == rep.Size {
			fmt.Fprintf(std.out, "%s: intact, %d records, %d digests: nothing to repair\n", lp, rep.Records, rep.Digests)
			return nil
		}
		if err := checkHistoryCut(path, rep); err != nil {
			return err
		}
		if !*dryRun {
			repair := mmapstore.RepairLog
			if *salvage {
				repair = mmapstore.SalvageLog
			}
			if rep, err = repair(lp); err != nil {
				if errors.Is(err, mmapstore.ErrLocked) {
					return fmt.Errorf("%w: a writer has the log open (an add, a dedup -state, or a server writing the key): stop it first", err)
				}
				return err
			}
		}
		describeRepair(std.out, lp, rep, *dryRun, *salvage)
		if *dryRun {
			return exitError{1}
		}
		return nil
	}
}

// logOf returns the filter file and the digest log that arg names: a
// filter file FILE (its log is FILE.log, as the server and the growing
// filter name it), or the log itself.
func logOf(arg string) (path, lp string) {
	if p, ok := strings.CutSuffix(arg, ".log"); ok {
		if _, err := os.Lstat(arg + ".log"); err != nil || isLog(arg) {
			return p, arg // the log named itself
		}
	}
	lp = arg + ".log"
	if _, err := os.Lstat(lp); err != nil {
		lp = walPath(arg) // the server's, beside a link's target
	}
	return arg, lp
}

// isLog reports whether the file at path is a regular file that starts
// with a digest log's magic (a FIFO is not opened: that would wait for a
// writer).
func isLog(path string) bool {
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, len(mmapstore.LogMagic))
	_, err = io.ReadFull(f, b)
	return err == nil && string(b) == mmapstore.LogMagic
}

// checkHistoryCut refuses a cut of a growing filter's history below what
// its snapshot holds: every growth rebuilds the table from the history, so
// the digests cut would be missing from every later table (false
// negatives), and the filter would be refused anyway (its history shorter
// than its snapshot). Its lookups are right as it is.
func checkHistoryCut(path string, rep mmapstore.LogReport) error {
	h, err := mmapstore.ReadHeader(path)
	if err != nil || h.Variant != mmapstore.Growing || rep.Cut >= int64(h.HistoryOffset) {
		return nil
	}
	return &fs.PathError{Op: "repair log", Path: path + ".log", Err: fmt.Errorf("%w at offset %d, among the digests the snapshot holds (its history ends at offset %d): a cut there would drop them from every later growth, so nothing was cut. %s still answers lookups (test, serve) and verify reports the damage; to take adds again, build a new filter from its keys",
		mmapstore.ErrLogCorrupt, rep.Cut, h.HistoryOffset, path)}
}

// describeRepair says what the repair of the log at lp cut (or would
// cut); with salvage, the intact records after the damage were kept.
func describeRepair(w io.Writer, lp string, rep mmapstore.LogReport, dryRun, salvage bool) {
	verb := "cut"
	if dryRun {
		verb = "would cut"
	}
	if rep.Torn {
		fmt.Fprintf(w, "%s: torn tail (a write cut by a crash) of %d bytes after offset %d: %s there; kept %d records, %d digests\n",
			lp, rep.Dropped(), rep.Cut, verb, rep.Records, rep.Digests)
		return
	}
	damaged := "1 damaged record"
	if rep.Runs > 1 {
		damaged = fmt.Sprintf("%d runs of damaged records", rep.Runs)
	}
	if salvage {
		verb = "salvaged"
		if dryRun {
			verb = "would salvage"
		}
		fmt.Fprintf(w, "%s: damaged at offset %d: %s: dropped %s (%d bytes, up to %d digests); kept %d records, %d digests before the damage, and the %d intact records after it (%d digests), written again from offset %d\n",
			lp, rep.Damage, verb, damaged, rep.Invalid, rep.InvalidDigests, rep.Records, rep.Digests, rep.Intact, rep.IntactDigests, rep.Cut)
		return
	}
	fmt.Fprintf(w, "%s: damaged at offset %d: %s there, dropping %d bytes: %s (%d bytes, up to %d digests) and the %d intact records after the damage (%d digests: acknowledged adds, lost; -salvage keeps them); kept %d records, %d digests\n",
		lp, rep.Damage, verb, rep.Dropped(), damaged, rep.Invalid, rep.InvalidDigests, rep.Intact, rep.IntactDigests, rep.Records, rep.Digests)
}
