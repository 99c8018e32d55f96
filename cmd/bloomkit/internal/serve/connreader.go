package serve

import (
	"bytes"
	"errors"
	"github.com/bloomkit/bloomkit/cmd/bloomkit/internal/wire"

	"github.com/bloomkit/bloomkit/mmapstore"
)

// connReaders are the filters a connection looks up, each through its own
// mmapstore.Reader: a lookup then costs no locked instruction and writes
// no memory another core writes (a lease per command did both, on the
// generation's counters). The readers hold their filter only while the
// connection runs the lookups of one read: they are made idle before any
// other command runs, and before the replies are written and the next read
// waits (endBatch), so that an idle client pins no filter a swap, a DEL or
// the open-keys bound closed, and no command waits for a key's close while
// its own connection holds that key.
type connReaders struct {
	keys []connKey
	next int // the next to replace once all are in use
}

// maxConnKeys is how many keys a connection keeps readers for.
const maxConnKeys = 8

// connKey is one key of a connection's readers.
type connKey struct {
	name []byte
	e    *entry // nil: the slot is free
	l    *live  // the Live r reads: e's current one when r was made
	r    *mmapstore.Reader[*handle]
	sl   *slot // e's mark in the open-keys clock
	// hits and misses count the lookups since the last idle, added to
	// the entry's counters then (a shared counter per lookup would be a
	// cache line every core writes).
	hits, misses uint64
}

// view returns key's filter for a lookup of cl's, valid until cl's readers
// are made idle, and the connKey that counts its hits. A key that is not
// served (no file) is errNoKey.
func (s *Server) view(cl *client, key []byte) (*connKey, *handle, error) {
	rs := &cl.readers
	for i := range rs.keys {
		k := &rs.keys[i]
		if k.e == nil || !bytes.Equal(k.name, key) {
			continue
		}
		// The key is still served by the Live the reader reads (a
		// switch to writing, DEL or the open-keys bound replace or drop
		// it); a publish swapped in by that Live is the reader's to see.
		if k.e.cur.Load() == k.l {
			if h, err := k.r.Value(); err == nil {
				if k.sl != nil && !k.sl.used.Load() {
					k.sl.used.Store(true)
				}
				return k, h, nil
			}
		}
		return s.reopenView(cl, k, key)
	}
	var k *connKey
	for i := range rs.keys {
		if rs.keys[i].e == nil {
			k = &rs.keys[i]
			break
		}
	}
	if k == nil {
		if len(rs.keys) < maxConnKeys {
			rs.keys = append(rs.keys, connKey{})
			k = &rs.keys[len(rs.keys)-1]
		} else {
			k = &rs.keys[rs.next]
			rs.next = (rs.next + 1) % maxConnKeys
		}
	}
	return s.reopenView(cl, k, key)
}

// reopenView points k at key's current filter. It holds no filter while
// it looks the key up (which may wait for a close of the key), as a
// lease per command never did.
func (s *Server) reopenView(cl *client, k *connKey, key []byte) (*connKey, *handle, error) {
	cl.readers.idle()
	k.drop()
	for range 100 {
		e, err := s.lookup(key)
		if err != nil {
			return nil, nil, err
		}
		l := e.cur.Load()
		if l == nil {
			continue // dropped or closed since: look it up again
		}
		r := l.NewReader()
		h, err := r.Value()
		if err != nil {
			r.Close() // closed since: look it up again
			continue
		}
		k.name = append(k.name[:0], key...)
		k.e, k.l, k.r, k.sl = e, l, r, nil
		if v, ok := s.keys.m.Load(e.name); ok && v.(*slot).e == e {
			k.sl = v.(*slot)
		}
		return k, h, nil
	}
	return nil, nil, errors.New("key closed and reopened under the command 100 times; try again")
}

// fold adds the counts of k to its entry.
func (k *connKey) fold() {
	if k.hits > 0 {
		k.e.hits.Add(k.hits)
	}
	if k.misses > 0 {
		k.e.misses.Add(k.misses)
	}
	k.hits, k.misses = 0, 0
}

// drop closes k's reader and frees the slot.
func (k *connKey) drop() {
	if k.e == nil {
		return
	}
	k.fold()
	k.r.Close()
	k.e, k.l, k.r, k.sl = nil, nil, nil, nil
}

// idle releases the filters the readers hold and adds up their counts.
func (rs *connReaders) idle() {
	for i := range rs.keys {
		k := &rs.keys[i]
		if k.e != nil {
			k.fold()
			k.r.Idle()
		}
	}
}

// close closes every reader (the connection ended).
func (rs *connReaders) close() {
	for i := range rs.keys {
		rs.keys[i].drop()
	}
}

// existsBatch is the run of BF.EXISTS on one key that a connection's read
// holds, answered by one batch lookup (partitioned's ContainsMany
// overlaps the memory misses of its keys) when another command comes, the
// key changes, or the read's commands are done. The key and items are
// slices of the read buffer, valid until then.
type existsBatch struct {
	key   []byte
	items [][]byte
	found []bool
}

// queueExists takes BF.EXISTS key item into the connection's batch.
func (s *Server) queueExists(c wire.Conn, cl *client, key, item []byte) {
	b := &cl.batch
	if len(b.items) > 0 && !bytes.Equal(b.key, key) {
		s.flushExists(c, cl)
	}
	b.key = key
	b.items = append(b.items, item)
}

// flushExists answers the queued BF.EXISTS, in order, as cmdExists would
// one by one.
func (s *Server) flushExists(c wire.Conn, cl *client) {
	b := &cl.batch
	items := b.items
	if len(items) == 0 {
		return
	}
	b.items = b.items[:0]
	k, h, err := s.view(cl, b.key)
	if errors.Is(err, errNoKey) {
		s.stats.misses.Add(uint64(len(items)))
		for range items {
			writeBool(c, false)
		}
		b.release(len(items))
		return
	}
	if err != nil {
		for range items {
			s.keyError(c, err)
		}
		b.release(len(items))
		return
	}
	found := b.found[:0]
	if h.many != nil && len(items) > 1 {
		found = h.many(items, found)
	} else {
		for _, it := range items {
			found = append(found, h.f.Contains(it))
		}
	}
	b.found = found
	k.reply(c, found[:len(items)])
	b.release(len(items))
}

// release drops the batch's slices of the read buffer (they would keep a
// buffer dropped by the reader alive), and its arrays when a large read
// grew them.
func (b *existsBatch) release(n int) {
	b.key = nil
	clear(b.items[:n]) // the ones after were cleared by their own batch
	if cap(b.items) > wire.MaxArgsKept {
		b.items, b.found = nil, nil
	}
}

// reply writes one reply per lookup (1 or true: found; resp3.go) and counts them.
func (k *connKey) reply(c wire.Conn, found []bool) {
	for _, f := range found {
		if f {
			k.hits++
		} else {
			k.misses++
		}
		writeBool(c, f)
	}
}
