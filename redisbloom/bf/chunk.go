package bf

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync/atomic"
)

// The SCANDUMP header chunk: RedisBloom's packed dumpedChainHeader, little
// endian: the chain's size (u64), its number of stages (u32), options (u32)
// and growth (u32), then a dumpedChainLink a stage: bytes, bits, size (u64
// each), error and bpe (f64), hashes (u32), entries (u64), n2 (u8).
const (
	headerBytes = 8 + 4 + 4 + 4
	linkBytes   = 8 + 8 + 8 + 8 + 8 + 4 + 8 + 1
)

// MaxChunk is the most bytes of a stage one SCANDUMP chunk carries, as in
// RedisBloom (16 MiB).
const MaxChunk = 16 << 20

// EncodeHeader is the chain's SCANDUMP header chunk (the one at iterator 1).
func (f *Filter) EncodeHeader() []byte {
	st := *f.stages.Load()
	le := binary.LittleEndian
	out := make([]byte, 0, headerBytes+linkBytes*len(st))
	out = le.AppendUint64(out, f.count.Load())
	out = le.AppendUint32(out, uint32(len(st)))
	out = le.AppendUint32(out, f.options)
	out = le.AppendUint32(out, f.growth)
	for _, s := range st {
		out = le.AppendUint64(out, s.Bytes)
		out = le.AppendUint64(out, s.Bits)
		out = le.AppendUint64(out, s.count.Load())
		out = le.AppendUint64(out, math.Float64bits(s.Error))
		out = le.AppendUint64(out, math.Float64bits(s.BPE))
		out = le.AppendUint32(out, s.Hashes)
		out = le.AppendUint64(out, s.Capacity)
		out = append(out, s.N2)
	}
	return out
}

// DecodeHeader makes an empty chain (every bit clear) of the geometry a
// SCANDUMP header chunk describes, refusing with ErrBadData what RedisBloom
// refuses, and a chain whose stages together pass maxBytes (0: no bound
// but MaxStageBytes a stage). Its bits come with LoadChunk.
func DecodeHeader(buf []byte, maxBytes uint64) (*Filter, error) {
	if len(buf) < headerBytes {
		return nil, fmt.Errorf("%w: a header of %d bytes", ErrBadData, len(buf))
	}
	le := binary.LittleEndian
	size := le.Uint64(buf)
	n := le.Uint32(buf[8:])
	if n == 0 || uint64(len(buf)) != headerBytes+linkBytes*uint64(n) {
		return nil, fmt.Errorf("%w: %d stages in a header of %d bytes", ErrBadData, n, len(buf))
	}
	stages := make([]Stage, n)
	for i := range stages {
		p := buf[headerBytes+linkBytes*i:]
		stages[i] = Stage{
			Bytes:    le.Uint64(p),
			Bits:     le.Uint64(p[8:]),
			Count:    le.Uint64(p[16:]),
			Error:    math.Float64frombits(le.Uint64(p[24:])),
			BPE:      math.Float64frombits(le.Uint64(p[32:])),
			Hashes:   le.Uint32(p[40:]),
			Capacity: le.Uint64(p[44:]),
			N2:       p[52],
		}
	}
	return build(size, le.Uint32(buf[12:]), le.Uint32(buf[16:]), stages, maxBytes)
}

// build makes an empty chain of the given stages after the checks
// RedisBloom makes of a header (SB_NewChainFromHeader) or a DUMP payload.
func build(size uint64, options, growth uint32, stages []Stage, maxBytes uint64) (*Filter, error) {
	if options&^knownOptions != 0 {
		return nil, fmt.Errorf("%w: options %#x", ErrBadData, options)
	}
	var total, bytes uint64
	for i := range stages {
		s := &stages[i]
		if !s.valid() {
			return nil, fmt.Errorf("%w: stage %d (%d bits, %d bytes, k %d, error %v)", ErrBadData, i, s.Bits, s.Bytes, s.Hashes, s.Error)
		}
		if s.Count > math.MaxUint64-total {
			return nil, fmt.Errorf("%w: stage sizes overflow", ErrBadData)
		}
		total += s.Count
		bytes += s.Bytes
		if maxBytes > 0 && bytes > maxBytes {
			return nil, fmt.Errorf("%w: %d bytes of stages, more than the %d allowed", ErrBadData, bytes, maxBytes)
		}
	}
	if total != size {
		return nil, fmt.Errorf("%w: the stages hold %d items, the chain says %d", ErrBadData, total, size)
	}
	if maxBytes == 0 {
		maxBytes = MaxStageBytes
	}
	f := &Filter{options: options, growth: growth, maxBytes: maxBytes}
	st := make([]*stage, len(stages))
	for i, s := range stages {
		st[i] = s.alloc()
	}
	f.stages.Store(&st)
	f.count.Store(size)
	return f, nil
}

// locate finds the stage that holds byte pos of the stages' arrays laid end
// to end, and the offset in it.
func (f *Filter) locate(pos uint64) (*stage, uint64, bool) {
	for _, s := range *f.stages.Load() {
		if pos < s.Bytes {
			return s, pos, true
		}
		pos -= s.Bytes
	}
	return nil, 0, false
}

// ScanDump is BF.SCANDUMP key iter: iterator 0 gives the header chunk and
// iterator 1; every later iterator the next bytes of a stage (at most
// MaxChunk) and the iterator after them; past the last stage, 0 and no
// bytes.
func (f *Filter) ScanDump(iter int64) (int64, []byte) {
	if iter == 0 {
		return 1, f.EncodeHeader()
	}
	if iter < 0 {
		return 0, nil
	}
	s, off, ok := f.locate(uint64(iter - 1))
	if !ok {
		return 0, nil
	}
	n := min(s.Bytes-off, MaxChunk)
	out := make([]byte, n)
	for i := uint64(0); i < n; {
		b := off + i
		w := atomic.LoadUint64(&s.words[b>>3])
		for ; i < n && (off+i)>>3 == b>>3; i++ {
			out[i] = byte(w >> (8 * ((off + i) & 7)))
		}
	}
	return iter + int64(n), out
}

// LoadChunk is BF.LOADCHUNK key iter data for a chain that exists: it
// writes the chunk SCANDUMP returned with iterator iter (which counts the
// chunk's bytes) into its stage, as RedisBloom does, and refuses a chunk at
// no stage (ErrNoLink), past its stage's end (ErrTooBig) or with an
// iterator that cannot be a chunk's (ErrBadData).
func (f *Filter) LoadChunk(iter int64, data []byte) error {
	if iter <= 0 || uint64(iter) < uint64(len(data)) {
		return ErrBadData
	}
	start := uint64(iter) - uint64(len(data))
	if start == 0 {
		return ErrNoLink
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	s, off, ok := f.locate(start - 1)
	if !ok {
		return ErrNoLink
	}
	if uint64(len(data)) > s.Bytes-off {
		return ErrTooBig
	}
	for i := 0; i < len(data); {
		b := off + uint64(i)
		word := &s.words[b>>3]
		var mask, val uint64
		for ; i < len(data) && (off+uint64(i))>>3 == b>>3; i++ {
			sh := 8 * ((off + uint64(i)) & 7)
			mask |= 0xff << sh
			val |= uint64(data[i]) << sh
		}
		for {
			old := atomic.LoadUint64(word)
			if atomic.CompareAndSwapUint64(word, old, old&^mask|val) {
				break
			}
		}
	}
	return nil
}

// TotalBytes is the length of the stages' arrays laid end to end: a load
// is whole when its chunks cover them.
func (f *Filter) TotalBytes() uint64 {
	var t uint64
	for _, s := range *f.stages.Load() {
		t += s.Bytes
	}
	return t
}
