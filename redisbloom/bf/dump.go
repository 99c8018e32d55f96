package bf

import (
	"errors"
	"fmt"
	"math"

	"github.com/bloomkit/bloomkit/redisbloom/internal/rdb"
)

// TypeName is the name of RedisBloom's Bloom chain type in Redis (TYPE
// answers it), and encodingVersion the newest encoding of its DUMP payload
// that RedisBloom 2.6 writes and reads (BF_MIN_GROWTH_ENC).
const (
	TypeName        = "MBbloom--"
	encodingVersion = 4
	// Older encodings: before 2 no options field, before 4 no growth
	// (RedisBloom then grows by 2), 0 without bits and n2.
	encOptions = 2
	encGrowth  = 4
)

// ErrNotBloom is the error of a DUMP payload of a value that is not a
// RedisBloom Bloom chain.
var ErrNotBloom = errors.New("bf: not a DUMP payload of a RedisBloom Bloom filter")

// Dump is the chain's DUMP payload as RedisBloom 2.6 writes it for Redis 7
// (type MBbloom--, encoding 4; the arrays uncompressed), which RESTORE loads
// into any Redis with RedisBloom 2.x.
func (f *Filter) Dump() []byte {
	id, _ := rdb.ModuleID(TypeName, encodingVersion)
	w := rdb.NewWriter(id)
	st := *f.stages.Load()
	w.Uint(f.count.Load())
	w.Uint(uint64(len(st)))
	w.Uint(uint64(f.options))
	w.Uint(uint64(f.growth))
	buf := make([]byte, 0)
	for _, s := range st {
		w.Uint(s.Capacity)
		w.Double(s.Error)
		w.Uint(uint64(s.Hashes))
		w.Double(s.BPE)
		w.Uint(s.Bits)
		w.Uint(uint64(s.N2))
		buf = s.appendBytes(buf[:0])
		w.String(buf)
		w.Uint(s.count.Load())
	}
	return rdb.Seal(w.Bytes())
}

// appendBytes appends the stage's array in RedisBloom's byte order.
func (s *stage) appendBytes(out []byte) []byte {
	for i := uint64(0); i < s.Bytes; i++ {
		out = append(out, byte(s.words[i>>3]>>(8*(i&7))))
	}
	return out
}

// Restore is RESTORE of a DUMP payload RedisBloom wrote for a Bloom chain
// (encodings 0 to 4): a footer whose version or CRC is wrong is
// rdb.ErrChecksum (Redis's "DUMP payload version or checksum are wrong"), a
// value of another type ErrNotBloom, and fields RedisBloom would refuse, or
// stages of more than maxBytes together (0: MaxStageBytes a stage),
// ErrBadData. Nothing is allocated beyond what the payload's own bytes
// hold.
func Restore(payload []byte, maxBytes uint64) (*Filter, error) {
	r, enc, err := rdb.OpenModule(payload, TypeName, encodingVersion)
	if errors.Is(err, rdb.ErrOtherType) {
		return nil, fmt.Errorf("%w: %v", ErrNotBloom, err)
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

// fields reads a payload's fields in order, keeping the first error (every
// read after it returns zero).
type fields struct {
	r   *rdb.Reader
	err error
}

func (fs *fields) u() uint64 {
	if fs.err != nil {
		return 0
	}
	v, err := fs.r.Uint()
	fs.err = err
	return v
}

func (fs *fields) d() float64 {
	if fs.err != nil {
		return 0
	}
	v, err := fs.r.Double()
	fs.err = err
	return v
}

func (fs *fields) str(limit uint64) []byte {
	if fs.err != nil {
		return nil
	}
	v, err := fs.r.String(limit)
	fs.err = err
	return v
}

func restoreFields(r *rdb.Reader, enc int, maxBytes uint64) (*Filter, error) {
	fs := &fields{r: r}
	size, n := fs.u(), fs.u()
	if fs.err == nil && n == 0 {
		return nil, errors.New("no stages")
	}
	var options, growth uint64 = 0, 2
	if enc >= encOptions {
		options = fs.u()
	}
	if enc >= encGrowth {
		growth = fs.u()
	}
	if options > math.MaxUint32 || growth > math.MaxUint32 {
		return nil, fmt.Errorf("options %#x, growth %d", options, growth)
	}
	var stages []Stage
	var arrays [][]byte
	var total uint64
	for i := uint64(0); i < n && fs.err == nil; i++ {
		s := Stage{Capacity: fs.u(), Error: fs.d(), Hashes: uint32(fs.u()), BPE: fs.d()}
		if enc == 0 {
			s.Bits = uint64(float64(s.Capacity) * s.BPE)
		} else {
			s.Bits, s.N2 = fs.u(), uint8(fs.u())
		}
		limit := min(s.Bits/8+1, MaxStageBytes)
		if maxBytes > 0 {
			limit = min(limit, maxBytes-min(total, maxBytes))
		}
		b := fs.str(limit)
		s.Bytes = uint64(len(b))
		total += s.Bytes
		s.Count = fs.u()
		stages = append(stages, s)
		arrays = append(arrays, b)
	}
	if fs.err != nil {
		return nil, fs.err
	}
	if err := r.EOF(); err != nil {
		return nil, err
	}
	f, err := build(size, uint32(options), uint32(growth), stages, maxBytes, nil)
	if err != nil {
		return nil, err
	}
	for i, s := range *f.stages.Load() {
		for j, c := range arrays[i] {
			s.words[j>>3] |= uint64(c) << (8 * (j & 7))
		}
	}
	return f, nil
}
