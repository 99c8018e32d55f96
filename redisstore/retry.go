package redisstore

import (
	"context"
	"fmt"
	"slices"
)

// fault is why an operation must be run again: what retry repairs.
type fault int

const (
	faultNone    fault = iota
	faultMissing       // a segment is missing: the filter may have been replaced
	faultStale         // a stage was added: reread the header
	faultFull          // the newest stage is full: add a stage
)

// op is one attempt of an operation on state st. strict is false when the
// last stale fault was an unpublished stage (see retry). It returns the
// fault to repair, and the segment it concerns when missing.
type op func(st *state, strict bool) (fault, string, error)

// retry runs o until it reports no fault, repairing each: it rereads the
// header once for missing segments (a Push may have replaced the filter),
// adds a stage when the newest is full and follows stages others added.
// (A flushed script cache is no fault: evalCalls sends the script again.)
// Every repair but growth is done at most once, and growth at most once per
// stage, so retry ends.
func (f *Filter) retry(ctx context.Context, o op) error {
	refreshed, strict := false, true
	for tries := 0; tries < 2*DefaultMaxStages+4; tries++ {
		st := f.st.Load()
		ft, seg, err := o(st, strict)
		if err != nil {
			return err
		}
		switch ft {
		case faultNone:
			return nil
		case faultMissing:
			if refreshed {
				return fmt.Errorf("%w: %s", ErrMissing, seg)
			}
			refreshed = true
			changed, err := f.reload(ctx, st)
			if err != nil {
				return err
			}
			if !changed {
				return fmt.Errorf("%w: %s", ErrMissing, seg)
			}
		case faultStale:
			changed, err := f.reload(ctx, st)
			if err != nil {
				return err
			}
			// A stage allocated but not (yet) published holds no key:
			// go on without looking for it.
			strict = changed
		case faultFull:
			if err := f.grow(ctx, st); err != nil {
				return err
			}
			strict = true
		}
	}
	return fmt.Errorf("%w: %s: the filter kept changing during the call", ErrConflict, f.name)
}

// reload rereads the header and reports whether it differs from st's (a
// new generation or more stages); the handle then uses it.
func (f *Filter) reload(ctx context.Context, st *state) (bool, error) {
	h, err := readHeader(ctx, f.c, f.name)
	if err != nil {
		return false, err
	}
	if h.generation == st.h.generation && len(h.stages) == len(st.h.stages) && h.sum == st.h.sum {
		return false, nil
	}
	f.st.CompareAndSwap(st, newState(f.name, h))
	return true, nil
}

// grow adds the stage after st's newest, unless another client did: the new
// stage's segments are allocated (kept if another client allocated them
// first), then the header is replaced if its checksum is still the one read
// here. Of many clients racing, exactly one replaces it; the others find
// the new stage when they reread the header.
func (f *Filter) grow(ctx context.Context, st *state) error {
	h, err := readHeader(ctx, f.c, f.name)
	if err != nil {
		return err
	}
	if h.generation != st.h.generation || len(h.stages) != len(st.h.stages) {
		f.st.CompareAndSwap(st, newState(f.name, h))
		return nil
	}
	if !h.growing() {
		return fmt.Errorf("%w: %s: a fixed filter is full", ErrLimit, f.name) // not reached: fixed units have no share
	}
	if len(h.stages) >= h.maxStages {
		return fmt.Errorf("%w: %s: %d stages, the limit", ErrLimit, f.name, h.maxStages)
	}
	ns, err := stageGeometry(h.first().capacity, h.targetP, h.growth, h.tight, h.shards, len(h.stages))
	if err != nil {
		return fmt.Errorf("%w: %s: stage %d: %w", ErrLimit, f.name, len(h.stages), err)
	}
	if h.maxBytes > 0 && h.totalBytes()+ns.m/8 > h.maxBytes {
		return fmt.Errorf("%w: %s: stage %d of %d bytes would make %d, the limit is %d", ErrLimit, f.name, len(h.stages), ns.m/8, h.totalBytes()+ns.m/8, h.maxBytes)
	}
	nh := h
	nh.stages = append(slices.Clone(h.stages), ns)
	if err := checkSegments(&nh); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrLimit, f.name, err)
	}
	nst := newState(f.name, nh)
	if err := allocate(ctx, f.c, nst, len(nh.stages)-1, false); err != nil {
		return err
	}
	args := append([]any{fieldChecksum, h.sum}, nh.fields()...)
	ok, err := replaceHeaderScript.Run(ctx, f.c, []string{headerKey(f.name)}, args...).Int()
	if err != nil {
		return redisErr("add stage", f.name, err)
	}
	if ok == 1 {
		nst.h.sum = nh.fieldMap()[fieldChecksum]
		f.st.CompareAndSwap(st, nst)
		return nil
	}
	_, err = f.reload(ctx, st) // another client added it, or replaced the filter
	return err
}
