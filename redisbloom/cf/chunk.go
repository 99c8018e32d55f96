package cf

import (
	"encoding/binary"
	"fmt"
)

// The SCANDUMP header chunk: RedisBloom's packed CFHeader, little endian:
// items, buckets, deletes and filters (u64 each), then bucket size, max
// iterations and expansion (u16 each).
const headerBytes = 4*8 + 3*2

// MaxChunk is the most bytes of a filter one SCANDUMP chunk carries
// (RedisBloom's 16 MiB).
const MaxChunk = 16 << 20

// EncodeHeader is the filter's SCANDUMP header chunk.
func (f *Filter) EncodeHeader() []byte {
	le := binary.LittleEndian
	out := make([]byte, 0, headerBytes)
	out = le.AppendUint64(out, f.numItems.Load())
	out = le.AppendUint64(out, f.numBuckets)
	out = le.AppendUint64(out, f.numDeletes.Load())
	out = le.AppendUint64(out, uint64(len(*f.fs.Load())))
	out = le.AppendUint16(out, f.bucketSize)
	out = le.AppendUint16(out, f.maxIterations)
	return le.AppendUint16(out, f.expansion)
}

// DecodeHeader makes an empty filter (every slot free) of the geometry a
// SCANDUMP header chunk describes, refusing with ErrBadData what RedisBloom
// refuses (CFHeader_Load) and filters of more than maxBytes together (0:
// MaxBytes). Its slots come with LoadChunk.
func DecodeHeader(buf []byte, maxBytes uint64) (*Filter, error) {
	if len(buf) != headerBytes {
		return nil, fmt.Errorf("%w: a header of %d bytes, want %d", ErrBadData, len(buf), headerBytes)
	}
	le := binary.LittleEndian
	return build(le.Uint64(buf), le.Uint64(buf[8:]), le.Uint64(buf[16:]), uint16(le.Uint64(buf[24:])),
		le.Uint16(buf[32:]), le.Uint16(buf[34:]), le.Uint16(buf[36:]), maxBytes)
}

// build makes an empty filter after CuckooFilter_ValidateIntegrity's checks
// and this package's bound.
func build(items, buckets, deletes uint64, filters, bucketSize, maxIterations, expansion uint16, maxBytes uint64) (*Filter, error) {
	if maxBytes == 0 {
		maxBytes = MaxBytes
	}
	if bucketSize == 0 || bucketSize > MaxBucketSize || buckets == 0 || buckets > maxNumBuckets ||
		filters == 0 || maxIterations == 0 || buckets&(buckets-1) != 0 || (expansion == 0 && filters > 1) {
		return nil, fmt.Errorf("%w: %d filters of %d buckets of %d, %d iterations, expansion %d",
			ErrBadData, filters, buckets, bucketSize, maxIterations, expansion)
	}
	f := &Filter{numBuckets: buckets, bucketSize: bucketSize, maxIterations: maxIterations,
		expansion: expansion, maxBytes: maxBytes}
	f.numItems.Store(items)
	f.numDeletes.Store(deletes)
	f.fs.Store(&[]*sub{})
	for range filters {
		if err := f.grow(); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadData, err)
		}
	}
	return f, nil
}

// ScanDump is CF.SCANDUMP key pos: nothing (0) for a filter of no items;
// position 0 gives the header chunk and position 1; every later position
// the next bytes of a filter (a whole filter when it fits in MaxChunk, as
// RedisBloom does) and the position after them; past the last, 0.
func (f *Filter) ScanDump(pos int64) (int64, []byte) {
	if f.numItems.Load() == 0 || pos < 0 {
		return 0, nil
	}
	if pos == 0 {
		return 1, f.EncodeHeader()
	}
	off := uint64(pos - 1)
	for _, s := range *f.fs.Load() {
		size := s.slots(f.bucketSize)
		if off >= size {
			off -= size
			continue
		}
		n := size - off
		if size <= MaxChunk {
			off, n = 0, size
		} else {
			n = min(n, MaxChunk)
		}
		out := make([]byte, n)
		for i := range out {
			out[i] = s.get(off + uint64(i))
		}
		return pos + int64(n), out
	}
	return 0, nil
}

// LoadChunk is CF.LOADCHUNK key pos data for a filter that exists: data is
// the chunk SCANDUMP returned with position pos. A chunk that fits no
// filter is refused with ErrBadData (RedisBloom's "Couldn't load chunk!").
func (f *Filter) LoadChunk(pos int64, data []byte) error {
	if len(data) == 0 || pos <= 0 || uint64(pos-1) < uint64(len(data)) {
		return ErrBadData
	}
	off := uint64(pos-1) - uint64(len(data))
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range *f.fs.Load() {
		size := s.slots(f.bucketSize)
		if off >= size {
			off -= size
			continue
		}
		if uint64(len(data)) > size-off {
			return ErrBadData
		}
		for i, c := range data {
			s.put(off+uint64(i), c)
		}
		return nil
	}
	return ErrBadData
}

// TotalBytes is the length of the filters' slots laid end to end.
func (f *Filter) TotalBytes() uint64 {
	var t uint64
	for _, s := range *f.fs.Load() {
		t += s.slots(f.bucketSize)
	}
	return t
}

// Items is CF.INFO's Number of items inserted, Deletes its Number of items
// deleted.
func (f *Filter) Items() uint64 { return f.numItems.Load() }

// Deletes is CF.INFO's Number of items deleted (since the last compaction).
func (f *Filter) Deletes() uint64 { return f.numDeletes.Load() }

// Info is what CF.INFO reports besides the counts: the first filter's
// buckets, the number of filters, the bucket size, expansion and max
// iterations.
func (f *Filter) Info() (buckets uint64, filters int, bucketSize, expansion, maxIterations uint16) {
	return f.numBuckets, len(*f.fs.Load()), f.bucketSize, f.expansion, f.maxIterations
}

// MemUsage is the memory RedisBloom reports for the filter (CF.INFO's Size,
// MEMORY USAGE): its structs and every slot, on 64-bit builds.
func (f *Filter) MemUsage() uint64 {
	const filterStruct, subStruct = 40, 16
	fs := *f.fs.Load()
	return filterStruct + subStruct*uint64(len(fs)) + f.TotalBytes()
}
