package cf

import (
	"errors"
	"fmt"

	"github.com/bloomkit/bloomkit/redisbloom/internal/rdb"
)

// TypeName is the name of RedisBloom's cuckoo filter type in Redis (TYPE
// answers it); encodingVersion the newest encoding of its DUMP payload that
// RedisBloom 2.6 writes and reads (CF_MIN_EXPANSION_VERSION).
const (
	TypeName        = "MBbloomCF"
	encodingVersion = 4
)

// ErrNotCuckoo is the error of a DUMP payload of a value that is not a
// RedisBloom cuckoo filter.
var ErrNotCuckoo = errors.New("cf: not a DUMP payload of a RedisBloom cuckoo filter")

// Dump is the filter's DUMP payload as RedisBloom 2.6 writes it for Redis 7
// (type MBbloomCF, encoding 4; the slots uncompressed).
func (f *Filter) Dump() []byte {
	id, _ := rdb.ModuleID(TypeName, encodingVersion)
	w := rdb.NewWriter(id)
	fs := *f.fs.Load()
	for _, v := range []uint64{uint64(len(fs)), f.numBuckets, f.numItems.Load(), f.numDeletes.Load(),
		uint64(f.bucketSize), uint64(f.maxIterations), uint64(f.expansion)} {
		w.Uint(v)
	}
	for _, s := range fs {
		w.Uint(s.numBuckets)
		out := make([]byte, s.slots(f.bucketSize))
		for i := range out {
			out[i] = s.get(uint64(i))
		}
		w.String(out)
	}
	return rdb.Seal(w.Bytes())
}

// Restore is RESTORE of a DUMP payload RedisBloom wrote for a cuckoo filter
// (encodings up to 4): a wrong footer is rdb.ErrChecksum, another type
// ErrNotCuckoo, fields RedisBloom would refuse (or filters whose sizes do
// not follow from the first and the expansion, or more than maxBytes
// together; 0: MaxBytes) ErrBadData. Nothing is allocated beyond what the
// payload's own bytes hold.
func Restore(payload []byte, maxBytes uint64) (*Filter, error) {
	r, enc, err := rdb.OpenModule(payload, TypeName, encodingVersion)
	if errors.Is(err, rdb.ErrOtherType) {
		return nil, fmt.Errorf("%w: %v", ErrNotCuckoo, err)
	}
	if err != nil {
		return nil, err
	}
	f, err := restoreFields(r, enc, maxBytes)
	if err != nil && !errors.Is(err, ErrBadData) {
		err = fmt.Errorf("%w: %v", ErrBadData, err)
	}
	return f, err
}

func restoreFields(r *rdb.Reader, enc int, maxBytes uint64) (*Filter, error) {
	var first error
	u := func() uint64 {
		if first != nil {
			return 0
		}
		v, err := r.Uint()
		first = err
		return v
	}
	filters, buckets, items := u(), u(), u()
	var deletes, bucketSize, maxIter, expansion uint64 = 0, DefaultBucketSize, DefaultMaxIterations, DefaultExpansion
	if enc >= encodingVersion {
		deletes, bucketSize, maxIter, expansion = u(), u(), u(), u()
	}
	if first != nil {
		return nil, first
	}
	if filters > MaxFilters || bucketSize > MaxBucketSize || maxIter > MaxIterations || expansion > MaxExpansion {
		return nil, fmt.Errorf("%d filters, bucket size %d, %d iterations, expansion %d", filters, bucketSize, maxIter, expansion)
	}
	f, err := build(items, buckets, deletes, uint16(filters), uint16(bucketSize), uint16(maxIter), uint16(expansion), maxBytes)
	if err != nil {
		return nil, err
	}
	for i, s := range *f.fs.Load() {
		n := buckets
		if enc >= encodingVersion {
			n = u()
		}
		if first != nil {
			return nil, first
		}
		if n != s.numBuckets {
			return nil, fmt.Errorf("filter %d has %d buckets, the first and the expansion give %d", i, n, s.numBuckets)
		}
		data, err := r.String(s.slots(f.bucketSize))
		if err != nil {
			return nil, err
		}
		if uint64(len(data)) != s.slots(f.bucketSize) {
			return nil, fmt.Errorf("filter %d: %d bytes of slots, want %d", i, len(data), s.slots(f.bucketSize))
		}
		for j, c := range data {
			s.words[j>>3] |= uint64(c) << (8 * (j & 7))
		}
	}
	if err := r.EOF(); err != nil {
		return nil, err
	}
	return f, nil
}
