package growing

import (
	"fmt"

	"github.com/bloomkit/bloomkit"
)

// AddDurably adds the digests of ds in order, as TryAdd adds each, and
// writes each group of them to the history (and waits for the disk when
// sync is set) before it sets any of their bits: the add of a server that
// acknowledges only what is logged, and whose refused adds must change
// nothing. It sets isNew[i] (len(isNew) >= len(ds)) for the digests it
// took and returns how many it took, all of them unless it stopped:
//   - the filter is full and could not grow: an error wrapping ErrLimit,
//     as TryAdd's;
//   - the history could not be written (a full disk): the write's error;
//     the refused digests are neither in the table nor in the history
//     (mmapstore.Log.Commit), the count is as it was;
//   - the filter was closed: ErrClosed.
//
// The digests before the stop were written and added: the caller
// acknowledges them.
func (f *Filter) AddDurably(ds []bloomkit.Digest, isNew []bool, sync bool) (int, error) {
	if f.readOnly {
		panic(fmt.Errorf("growing: AddDurably: %w: %s", ErrReadOnly, f.path))
	}
	n := 0
	for n < len(ds) {
		room, err := f.addDurablyLocked(ds[n:], isNew[n:], sync)
		n += room
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// addDurablyLocked is one group of AddDurably, under f.mu: as many digests
// as the table takes before its growth is due (at least one), and within
// its capacity when growth failed.
func (f *Filter) addDurablyLocked(ds []bloomkit.Digest, isNew []bool, sync bool) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.roomLocked()
	if !ok {
		return 0, ErrClosed
	}
	added := f.added.Load()
	room := max(min(uint64(len(ds)), growAt(t.capacity)-min(growAt(t.capacity), added)), 1)
	if f.limitErr != nil {
		if added >= t.capacity {
			return 0, f.limitErr
		}
		room = min(room, t.capacity-added)
	}
	if f.log != nil {
		if err := f.log.Commit(ds[:room], sync); err != nil {
			return 0, fmt.Errorf("growing: %w", err)
		}
	}
	fresh := uint64(0)
	for i, d := range ds[:room] {
		isNew[i] = t.bf.Add(d)
		if isNew[i] {
			fresh++
		}
	}
	if f.added.Add(fresh) >= growAt(t.capacity) {
		f.growLocked(t)
	}
	return int(room), nil
}
