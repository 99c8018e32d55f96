package serve

import (
	"errors"
	"log/slog"
	"slices"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// A write command's adds are logged before they are applied (issue 42
// row 2): a command refused because its adds could not be written (a full
// disk) changes nothing, neither the filter's bits nor its count nor what
// a later write or checkpoint puts on disk. The filters the server writes
// are of two kinds here: a fixed filter with its write-ahead log (the
// digests go to the log with mmapstore.Log.Commit, then into the filter),
// and a growing one whose history is its log (AddDurably does the same
// under its own lock). A scalable file, written in place, is the one
// exception: its adds are in the mapped file at once, and only an msync
// failure under -fsync always (an I/O error, not a full disk: its stages
// are allocated when they are made) is reported after them.

// added is the outcome of a command's adds: the answers of the items
// taken (whether each was new), why it stopped before the others (the
// error that ends the reply, "" for none), and, when none could be
// logged, the log's error: the command is then refused whole.
type added struct {
	res    []bool
	failed string
	logErr error
}

// addItems adds items to h as one command. ds and found are the entry's
// buffers (digests and lookups, see warmAdds); res the answers' buffer.
func (s *Server) addItems(e *entry, h *handle, items [][]byte, res []bool) (added, []bloomkit.Digest, []bool) {
	always := s.fsyncAlways()
	switch {
	case h.wal != nil && h.adder != nil:
		ds, found, warm := h.warmAdds(items, e.addDigests, e.addFound)
		if !warm {
			ds = hashAll(h, items, ds)
		}
		a := added{res: res}
		n := len(ds)
		if h.f.Added()+uint64(n) > h.f.Capacity() {
			if !h.fullRefuses {
				s.warnPastCapacity(e, h)
			} else if n = h.room(ds); n < len(ds) {
				a.failed = errFull
			}
		}
		if n > 0 {
			lg := h.wal.log.Load()
			if lg == nil {
				a.logErr = errHandedOver
				return a, ds, found
			}
			if err := lg.Commit(ds[:n], always); err != nil {
				a.logErr = err
				return a, ds, found
			}
		}
		for _, d := range ds[:n] {
			a.res = append(a.res, h.adder.AddDigest(d))
		}
		return a, ds, found
	case h.durable != nil:
		ds := hashAll(h, items, e.addDigests)
		found := slices.Grow(e.addFound[:0], len(ds))[:len(ds)] // AddDurably sets each it takes
		n, err := h.durable(ds, found, always)
		a := added{res: append(res, found[:n]...)}
		switch {
		case err == nil:
		case errors.Is(err, mmapstore.ErrCommit) && n == 0:
			a.logErr = err
		case errors.Is(err, mmapstore.ErrCommit):
			a.failed = errInsert + ": " + notLogged + err.Error()
		default:
			s.logRefusal(slog.LevelError, "add refused", "key", e.name, "err", err)
			a.failed = addRefused(err)
		}
		return a, ds, found
	}
	return s.addInPlace(e, h, items, res), e.addDigests, e.addFound
}

// warnPastCapacity says once in the log, for a fixed filter that takes
// adds past its capacity (a build or a create: no NONSCALING reservation),
// that its rate now rises above the target.
func (s *Server) warnPastCapacity(e *entry, h *handle) {
	if h.warnedFull.Swap(true) {
		return
	}
	s.log.Warn("filter reaches its capacity and takes adds past it: its false-positive rate rises above the target (only a key reserved NONSCALING refuses them); rebuild it larger ('bloomkit build -n')",
		"key", e.name, "capacity", h.f.Capacity(), "count", h.f.Added(), "target_error_rate", h.f.TargetFPR())
}

// notLogged begins the reply to adds the log could not take.
const notLogged = "the adds could not be written to the log: "

func hashAll(h *handle, items [][]byte, ds []bloomkit.Digest) []bloomkit.Digest {
	ds = ds[:0]
	for _, k := range items {
		ds = append(ds, h.f.Hash(k))
	}
	return ds
}

// room is how many of ds a fixed filter at or near its capacity takes
// before it is full: RedisBloom's rule, an item not already present is
// refused once the count reaches the capacity. Whether an item is present
// is the filter's answer before the command, or an earlier item of the
// command with the same digest (an item made present by the bits of
// earlier items of the command, a false positive of the command's own,
// is counted as new: the filter stops at most that early, never later).
func (h *handle) room(ds []bloomkit.Digest) int {
	count, capacity := h.f.Added(), h.f.Capacity()
	var taken map[bloomkit.Digest]struct{}
	for i, d := range ds {
		if h.f.ContainsDigest(d) {
			continue
		}
		if _, dup := taken[d]; dup {
			continue
		}
		if count >= capacity {
			return i
		}
		count++
		if taken == nil {
			taken = make(map[bloomkit.Digest]struct{}, len(ds)-i)
		}
		taken[d] = struct{}{}
	}
	return len(ds)
}

// addInPlace adds items to a filter written in place (scalable), one by
// one, and then syncs it as -fsync says.
func (s *Server) addInPlace(e *entry, h *handle, items [][]byte, res []bool) added {
	a := added{res: res}
	for _, k := range items {
		if h.fullRefuses && h.f.Added() >= h.f.Capacity() && !h.f.Contains(k) {
			a.failed = errFull
			break
		}
		isNew, err := h.add(k)
		if err != nil {
			s.logRefusal(slog.LevelError, "add refused", "key", e.name, "err", err)
			a.failed = addRefused(err)
			break
		}
		a.res = append(a.res, isNew)
	}
	if err := h.commit(s.fsyncAlways()); err != nil {
		a.logErr = err
	}
	return a
}

// addRefused is the reply to an add the filter refused (it could not grow).
func addRefused(err error) string {
	msg := errInsert + ": " + err.Error()
	if errGrowthLimit(err) {
		msg += " (the bound is -max-filter-bytes, or the room -max-dir-bytes leaves in the folder)"
	}
	return msg
}

// commit makes the adds of the command just run durable as the fsync mode
// says, before its reply: the digests go to the log as one record, handed
// to the operating system (they survive the process), and fsynced with
// -fsync always. A growing filter's history is flushed the same way (and
// synced with -fsync always); a scalable file is synced with -fsync
// always.
func (h *handle) commit(always bool) error {
	if w := h.wal; w != nil {
		if len(w.pending) == 0 {
			return nil
		}
		lg := w.log.Load()
		if lg == nil {
			return errHandedOver
		}
		err := lg.Commit(w.pending, always)
		w.pending = w.pending[:0]
		return err
	}
	if always && h.writable {
		return h.f.Sync()
	}
	if h.hist != nil {
		return h.hist.Flush()
	}
	return nil
}
