package redisstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/partitioned"
)

// call is one script call: keys of one unit, every stage.
type call struct {
	keys    []string // counter, [next stage], segments
	args    []any
	payload []byte
	idx     []int // positions in the batch of the call's keys
}

// maxCallSegments bounds the distinct segments of one call (their
// positions are one byte).
const maxCallSegments = 250

// groupKeys bounds the keys of one script call, so that no call holds
// Redis for long (about a millisecond).
const groupKeys = 256

// plan groups the keys of a batch (their digests ds, positions idx) into
// script calls by unit of the newest stage, and encodes them. Units are the
// same in every stage of a growing filter (the shard); a fixed filter has
// one stage.
func plan(st *state, mode string, strict bool, ds []bloomkit.Digest, idx []int) []*call {
	last := len(st.stages) - 1
	locs := make([]place, len(idx)*len(st.stages))
	for n, i := range idx {
		for s := range st.stages {
			locs[n*len(st.stages)+s] = st.locate(s, ds[i])
		}
	}
	order := make([]int, len(idx))
	for n := range order {
		order[n] = n
	}
	unitOf := func(n int) uint64 { return locs[n*len(st.stages)+last].unit }
	if len(order) > 1 {
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(unitOf(a), unitOf(b)) })
	}
	var calls []*call
	var cur *call
	var segPos map[[2]uint64]byte
	var curUnit uint64
	for _, n := range order {
		u := unitOf(n)
		if cur == nil || u != curUnit || len(cur.idx) >= groupKeys || len(segPos)+len(st.stages) > maxCallSegments {
			cur = &call{}
			calls = append(calls, cur)
			curUnit = u
			segPos = map[[2]uint64]byte{}
			ls := &st.stages[last]
			cur.keys = append(cur.keys, ls.cnt[u])
			marker := "0"
			if st.h.growing() && strict {
				cur.keys = append(cur.keys, ls.next[u])
				marker = "1"
			}
			share := uint64(0)
			if st.h.growing() && mode == "a" {
				share = max(1, st.h.stages[last].capacity/st.h.shards)
			}
			cur.args = []any{mode, strconv.Itoa(len(st.stages)), marker, strconv.FormatUint(share, 10), nil}
		}
		cur.idx = append(cur.idx, idx[n])
		for t := range st.stages {
			// Add tests the older stages and adds to the newest, last;
			// Contains tests the newest first, where most keys are.
			s := t
			if mode == "c" {
				s = last - t
			}
			l := locs[n*len(st.stages)+s]
			pos, ok := segPos[[2]uint64{uint64(s), l.seg}]
			if !ok {
				pos = byte(len(segPos))
				segPos[[2]uint64{uint64(s), l.seg}] = pos
				cur.keys = append(cur.keys, st.stages[s].seg[l.seg])
				cur.args = append(cur.args, st.stages[s].segLen[l.seg])
			}
			cur.payload = appendEntry(cur.payload, pos, l.off, l.m)
		}
	}
	for _, c := range calls {
		c.args[4] = c.payload
	}
	return calls
}

// appendEntry appends one stage of a key's entry of the script's ARGV[5]
// to p: the segment's position, the block's byte offset, then the (byte
// index, bits) pairs of the bytes that hold its bits.
func appendEntry(p []byte, pos byte, off uint64, m partitioned.Masks) []byte {
	p = append(p, pos, byte(off>>24), byte(off>>16), byte(off>>8), byte(off), 0)
	np := len(p) - 1
	for w, mw := range m {
		for j := 0; mw != 0; j, mw = j+1, mw>>8 {
			if b := byte(mw); b != 0 {
				p = append(p, byte(8*w+j), b)
				p[np]++
			}
		}
	}
	return p
}

// exec runs calls, in one pipelined round trip when there are several (one
// per node of a Cluster), and hands each key's answer to res. Keys whose
// call failed with a fault, or that were answered keyFull, stay in pending
// (set to true); the fault returned is the one retry must repair first.
func (f *Filter) exec(ctx context.Context, calls []*call, res func(i int, r byte), pending []bool) (fault, string, error) {
	keys, args := make([][]string, len(calls)), make([][]any, len(calls))
	for i, c := range calls {
		keys[i], args[i] = c.keys, c.args
	}
	cmds := evalCalls(ctx, f.c, opScript, keys, args)
	worst, seg := faultNone, ""
	raise := func(ft fault, s string) {
		if ft > worst {
			worst, seg = ft, s
		}
	}
	for i, cmd := range cmds {
		c := calls[i]
		out, err := cmd.Text()
		switch {
		case err == nil && out == replyStale:
			raise(faultStale, "")
		case err == nil && len(out) == len(c.idx):
			for n, j := range c.idx {
				if out[n] == keyFull {
					raise(faultFull, "")
					continue
				}
				pending[j] = false
				res(j, out[n])
			}
		case err == nil:
			return faultNone, "", fmt.Errorf("%w: %s: script answered %d keys for %d", ErrRedis, f.name, len(out), len(c.idx))
		case redis.HasErrorPrefix(err, missingPrefix):
			raise(faultMissing, strings.TrimPrefix(err.Error(), missingPrefix+" "))
		case redis.HasErrorPrefix(err, "NOPERM"):
			return faultNone, "", fmt.Errorf("%w: %w", errScriptDenied, redisErr("call", f.name, err))
		default:
			return faultNone, "", redisErr("call", f.name, err)
		}
	}
	return worst, seg, nil
}

// do runs mode ("a" or "c") on keys through retry, calling res with each
// key's answer once.
func (f *Filter) do(ctx context.Context, mode string, keys []input, res func(i int, r byte)) error {
	pending := make([]bool, len(keys))
	for i := range pending {
		pending[i] = true
	}
	ds := make([]bloomkit.Digest, len(keys))
	first := f.st.Load().h
	return f.retry(ctx, func(st *state, strict bool) (fault, string, error) {
		var idx []int
		for i := range keys {
			if !pending[i] {
				continue
			}
			if k := &keys[i]; k.digest != nil && (st.h.seed != k.seed || st.h.scheme != k.scheme) {
				return faultNone, "", fmt.Errorf("%w: %q was replaced by a filter of seed %d and hashing scheme %d; the digest is under seed %d, scheme %d",
					ErrMismatch, f.name, st.h.seed, st.h.scheme, first.seed, first.scheme)
			}
			ds[i] = st.sum(&keys[i])
			idx = append(idx, i)
		}
		if len(idx) == 0 {
			return faultNone, "", nil
		}
		return f.exec(ctx, plan(st, mode, strict, ds, idx), res, pending)
	})
}

// digestKey returns the key of a caller's digest, made under the scheme and
// seed the handle knows now.
func (f *Filter) digestKey(d bloomkit.Digest) input {
	h := &f.st.Load().h
	return input{digest: &d, scheme: h.scheme, seed: h.seed}
}

// Add adds key to the filter and reports whether it was new: whether it was
// in no stage and some of its bits were unset (false: it was probably
// added before). One round trip: a script tests the older stages and sets
// the bits in the newest atomically. When the newest stage of a growing
// filter is full, Add first adds a stage (ErrLimit past the limits).
func (f *Filter) Add(ctx context.Context, k []byte) (bool, error) {
	return f.addOne(ctx, input{b: k})
}

// AddString is Add for a string key.
func (f *Filter) AddString(ctx context.Context, k string) (bool, error) {
	return f.addOne(ctx, input{s: k, isString: true})
}

// AddDigest is Add for a key hashed under the filter's Scheme and Seed
// (bloomkit.Hash hashes with scheme 1). If a Push replaced the filter with
// one of another seed or scheme, the digest no longer fits it: ErrMismatch.
func (f *Filter) AddDigest(ctx context.Context, d bloomkit.Digest) (bool, error) {
	return f.addOne(ctx, f.digestKey(d))
}

func (f *Filter) addOne(ctx context.Context, k input) (bool, error) {
	isNew := false
	err := f.do(ctx, "a", []input{k}, func(_ int, r byte) { isNew = r == keyNew })
	return isNew, err
}

// Contains reports whether key may have been added; false means definitely
// not. One round trip of plain commands, pipelined, and no script: the
// key's 64-byte block in each stage is read (GETRANGE, with its segment's
// length, STRLEN) and tested here; for a growing filter an EXISTS of the
// next stage's first segment in the key's shard tells whether a stage was
// added since the handle last read the header (then it rereads it and
// tries again). A Redis user whose ACL forbids scripts can call it.
func (f *Filter) Contains(ctx context.Context, k []byte) (bool, error) {
	return f.containsOne(ctx, input{b: k})
}

// ContainsString is Contains for a string key.
func (f *Filter) ContainsString(ctx context.Context, k string) (bool, error) {
	return f.containsOne(ctx, input{s: k, isString: true})
}

// ContainsDigest is Contains for a key hashed under the filter's Scheme and
// Seed; see AddDigest.
func (f *Filter) ContainsDigest(ctx context.Context, d bloomkit.Digest) (bool, error) {
	return f.containsOne(ctx, f.digestKey(d))
}

func (f *Filter) containsOne(ctx context.Context, k input) (bool, error) {
	found := false
	err := f.lookup(ctx, []input{k}, func(_ int, ok bool) { found = ok })
	return found, err
}

// lookup answers keys. A fixed filter's keys, and a single key of a growing
// filter, are read with plain commands (lookupPlain). Batches of a growing
// filter, which may touch every stage for thousands of keys, go through
// the script, one call per shard; for a user whose ACL forbids scripts,
// by plain commands too.
func (f *Filter) lookup(ctx context.Context, keys []input, res func(i int, ok bool)) error {
	if f.st.Load().h.growing() && len(keys) > 1 {
		err := f.do(ctx, "c", keys, func(i int, r byte) { res(i, r == keyNew) })
		if !errors.Is(err, errScriptDenied) {
			return err
		}
	}
	return f.lookupPlain(ctx, keys, res)
}

// lookupPlain answers keys with plain commands in one pipelined round trip:
// a STRLEN of each segment touched (a missing or cut segment is a fault,
// not an answer), a GETRANGE of each key's block in each stage, and for a
// growing filter an EXISTS of the next stage's first segment in the key's
// shard (a stage added since the header was read is a stale fault, so a
// key added there is not missed). That costs Redis well under a
// microsecond a command; a script call costs 2 µs before it does anything
// (BenchmarkRatioToPing: a single Contains on a growing filter 1.39 ->
// 1.0x a PING).
func (f *Filter) lookupPlain(ctx context.Context, keys []input, res func(i int, ok bool)) error {
	first := f.st.Load().h
	return f.retry(ctx, func(st *state, strict bool) (fault, string, error) {
		type q struct {
			m   partitioned.Masks
			blk *redis.StringCmd
		}
		last := len(st.stages) - 1
		qs := make([]q, 0, len(keys)*len(st.stages))
		type segID struct{ stage, seg uint64 }
		lens := map[segID]*redis.IntCmd{} // one STRLEN per segment of the batch
		var next []*redis.IntCmd
		pipe := f.c.Pipeline()
		for i := range keys {
			if k := &keys[i]; k.digest != nil && (st.h.seed != k.seed || st.h.scheme != k.scheme) {
				return faultNone, "", fmt.Errorf("%w: %q was replaced by a filter of seed %d and hashing scheme %d; the digest is under seed %d, scheme %d",
					ErrMismatch, f.name, st.h.seed, st.h.scheme, first.seed, first.scheme)
			}
			d := st.sum(&keys[i])
			for s := last; s >= 0; s-- { // the newest first, where most keys are
				ss := &st.stages[s]
				l := st.locate(s, d)
				if s == last && st.h.growing() && strict {
					next = append(next, pipe.Exists(ctx, ss.next[l.unit]))
				}
				if id := (segID{uint64(s), l.seg}); lens[id] == nil {
					lens[id] = pipe.StrLen(ctx, ss.seg[l.seg])
				}
				qs = append(qs, q{m: l.m, blk: pipe.GetRange(ctx, ss.seg[l.seg], int64(l.off), int64(l.off+blockBytes-1))})
			}
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return faultNone, "", redisErr("contains", f.name, err)
		}
		for _, e := range next {
			if e.Val() != 0 {
				return faultStale, "", nil
			}
		}
		for id, l := range lens {
			ss := &st.stages[id.stage]
			if strconv.FormatInt(l.Val(), 10) != ss.segLen[id.seg] {
				return faultMissing, fmt.Sprintf("%s is %d bytes, want %s", ss.seg[id.seg], l.Val(), ss.segLen[id.seg]), nil
			}
		}
		for _, q := range qs {
			if len(q.blk.Val()) != blockBytes {
				return faultMissing, fmt.Sprintf("a block of %q is %d bytes", f.name, len(q.blk.Val())), nil
			}
		}
		for i := range keys {
			found := false
			for _, q := range qs[i*len(st.stages) : (i+1)*len(st.stages)] {
				if testBlock(q.blk.Val(), q.m) {
					found = true
					break
				}
			}
			res(i, found)
		}
		return faultNone, "", nil
	})
}

// testBlock reports whether every bit of m is set in the 64-byte block b
// (file byte order: little-endian words).
func testBlock(b string, m partitioned.Masks) bool {
	var missing uint64
	for w := range m {
		var word uint64
		for j := 7; j >= 0; j-- {
			word = word<<8 | uint64(b[8*w+j])
		}
		missing |= m[w] &^ word
	}
	return missing == 0
}

// batchSize bounds the keys of one pipelined round trip of AddMany and
// ContainsMany; longer batches take several.
const batchSize = 4096

// AddMany adds every key and returns how many were new. The keys go in one
// pipelined round trip per batchSize keys (per node of a Cluster), one
// script call per unit the batch touches (per groupKeys keys). On error
// some of the keys may have been added: adding again is harmless.
func (f *Filter) AddMany(ctx context.Context, keys [][]byte) (int, error) {
	added := 0
	ks := make([]input, 0, min(len(keys), batchSize))
	for len(keys) > 0 {
		n := min(len(keys), batchSize)
		ks = ks[:0]
		for _, k := range keys[:n] {
			ks = append(ks, input{b: k})
		}
		err := f.do(ctx, "a", ks, func(_ int, r byte) {
			if r == keyNew {
				added++
			}
		})
		if err != nil {
			return added, err
		}
		keys = keys[n:]
	}
	return added, nil
}

// ContainsMany sets found[i] to whether keys[i] may have been added, for
// every i; found must be at least as long as keys. The lookups go in one
// pipelined round trip per batchSize keys (per node of a Cluster): plain
// commands as Contains sends for a fixed filter; for a growing one, one
// script call per shard the batch touches (plain commands again for a user
// whose ACL forbids scripts).
func (f *Filter) ContainsMany(ctx context.Context, keys [][]byte, found []bool) error {
	if len(found) < len(keys) {
		return fmt.Errorf("%w: %d results for %d keys", ErrInvalid, len(found), len(keys))
	}
	ks := make([]input, 0, min(len(keys), batchSize))
	for len(keys) > 0 {
		n := min(len(keys), batchSize)
		ks = ks[:0]
		for _, k := range keys[:n] {
			ks = append(ks, input{b: k})
		}
		out := found[:n]
		if err := f.lookup(ctx, ks, func(i int, ok bool) { out[i] = ok }); err != nil {
			return err
		}
		keys, found = keys[n:], found[n:]
	}
	return nil
}
