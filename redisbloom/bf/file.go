package bf

import (
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/filterfile"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// The one description of this variant: programs open its files through
// package filterfile (keys are made by moving them in, not for (n, p)).
func init() {
	filterfile.Register(filterfile.Variant{
		Name: "redisbloom-bf", Tag: mmapstore.RedisBloomBF, Layout: mmapstore.RedisBloomChain,
		Open: filterfile.Face(Open), OpenReadOnly: filterfile.Face(OpenReadOnly),
	})
}

// Compile-time checks of the faces the chain shows.
var (
	_ bloomkit.TryAdder   = (*Filter)(nil)
	_ bloomkit.FileWriter = (*Filter)(nil)
	_ bloomkit.Prefaulter = (*Filter)(nil)
)

// header is the file header of the chain (mmapstore.RedisBloomBF).
func (f *Filter) header() mmapstore.Header {
	return mmapstore.Header{
		Variant: mmapstore.RedisBloomBF, Scheme: f.Scheme(), M: f.Bits(), K: uint32(len(*f.stages.Load())),
		CellBits: 1, Capacity: f.Capacity(), TargetFPR: f.TargetFPR(), Count: f.count.Load(),
		Growth: float64(f.growth), Tightening: tightening,
	}
}

// parts is the payload: the SCANDUMP header chunk padded to 64 bytes, then
// the stages' words.
func (f *Filter) parts() [][]uint64 {
	tbl := f.EncodeHeader()
	words := make([]uint64, mmapstore.RedisBloomTableBytes(uint64(len(tbl)))/8)
	for i := 0; i < len(tbl); i += 8 {
		var w [8]byte
		copy(w[:], tbl[i:])
		words[i/8] = binary.LittleEndian.Uint64(w[:])
	}
	out := [][]uint64{words}
	for _, s := range *f.stages.Load() {
		out = append(out, s.words)
	}
	return out
}

// WriteTo writes the chain as a filter file (io.WriterTo): the bytes Open
// maps and Read reads.
func (f *Filter) WriteTo(w io.Writer) (int64, error) {
	return mmapstore.WriteStream(w, f.header(), f.parts()...)
}

// WriteFile writes the chain's file at path by an atomic replace: readers
// see the old file or the new one.
func (f *Filter) WriteFile(path string) error {
	return mmapstore.WriteFileAtomic(path, func(w io.Writer) error {
		_, err := f.WriteTo(w)
		return err
	})
}

// Read reads a chain from a stream WriteTo wrote, its stages together at
// most maxBytes (0: MaxStageBytes a stage). A short stream is
// io.ErrUnexpectedEOF; a file of another variant mmapstore.ErrVariant.
func Read(r io.Reader, maxBytes uint64) (*Filter, error) {
	h, words, err := mmapstore.ReadStream(r, mmapstore.RedisBloomBF)
	if err != nil {
		return nil, err
	}
	return fromPayload(h, words, maxBytes, false)
}

// fromPayload is the chain of a file's header and payload words: its
// stage table checked against the header, the stages' words in place
// (inPlace) or copied.
func fromPayload(h mmapstore.Header, words []uint64, maxBytes uint64, inPlace bool) (*Filter, error) {
	n := 20 + 53*uint64(h.K)
	tw := mmapstore.RedisBloomTableBytes(n) / 8
	if uint64(len(words)) < tw {
		return nil, fmt.Errorf("%w: a payload of %d words, its table needs %d", ErrLayout, len(words), tw)
	}
	tbl := make([]byte, tw*8)
	for i := range tw {
		binary.LittleEndian.PutUint64(tbl[i*8:], words[i])
	}
	f, err := DecodeHeader(tbl[:n], maxBytes)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrLayout, err)
	}
	backing := words[tw:]
	if !inPlace {
		backing = append([]uint64(nil), backing...)
	}
	st := f.Stages()
	f, err = build(f.Count(), f.options, f.growth, st, maxBytes, backing)
	if err != nil {
		return nil, err
	}
	switch {
	case f.Bits() != h.M:
		return nil, fmt.Errorf("%w: the stages hold %d bits, the header says %d", ErrLayout, f.Bits(), h.M)
	case f.Scheme() != h.Scheme:
		return nil, fmt.Errorf("%w: options %#x hash with %s, the header says %s", ErrLayout, f.options, f.Scheme(), h.Scheme)
	case float64(f.growth) != h.Growth:
		return nil, fmt.Errorf("%w: expansion %d, the header says %v", ErrLayout, f.growth, h.Growth)
	}
	return f, nil
}

// OpenReadOnly maps the chain's file read-only: O(1) in its size (the page
// cache shared with every other reader); TryAdd returns ErrReadOnly.
func OpenReadOnly(path string) (*Filter, error) { return openFile(path, true) }

// Open maps the chain's file copy-on-write: adds change the memory, never
// the file, until Sync or Close writes the whole chain to it again (an
// atomic replace), which is how a chain that grows stays one file. O(1) in
// the file's size until then.
func Open(path string) (*Filter, error) { return openFile(path, false) }

func openFile(path string, readOnly bool) (*Filter, error) {
	var mf *mmapstore.File
	var err error
	if readOnly {
		mf, err = mmapstore.OpenReadOnly(path, mmapstore.RedisBloomBF)
	} else {
		mf, err = mmapstore.OpenPrivate(path, mmapstore.RedisBloomBF)
	}
	if err != nil {
		return nil, err
	}
	f, err := fromPayload(mf.Header(), mf.Words(), 0, true)
	if err != nil {
		mf.Close(0)
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	f.store, f.readOnly, f.path = mf, readOnly, path
	return f, nil
}

// Create makes the chain New makes and its file at path, opened as Open
// opens it.
func Create(path string, capacity uint64, errorRate float64, growth uint32, nonScaling bool) (*Filter, error) {
	f, err := New(capacity, errorRate, growth, nonScaling)
	if err != nil {
		return nil, err
	}
	if err := f.WriteFile(path); err != nil {
		return nil, err
	}
	return Open(path)
}

// Path is the file the chain maps, "" in memory.
func (f *Filter) Path() string { return f.path }

// ReadOnly reports whether the chain was opened with OpenReadOnly.
func (f *Filter) ReadOnly() bool { return f.readOnly }

// Sync writes a chain opened with Open to its file (the whole chain, by an
// atomic replace), making every completed add durable; nil in memory and
// read-only; after Close, ErrClosed.
func (f *Filter) Sync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sync()
}

func (f *Filter) sync() error {
	if f.closed.Load() {
		return ErrClosed
	}
	if f.path == "" || f.readOnly {
		return nil
	}
	return f.WriteFile(f.path)
}

// Verify checks the mapped file against its payload checksum, O(size); nil
// in memory.
func (f *Filter) Verify() error {
	if f.store == nil {
		return nil
	}
	return f.store.Verify()
}

// Prefault reads the mapped file into memory; nil in memory.
func (f *Filter) Prefault() error {
	if f.store == nil {
		return nil
	}
	return f.store.Prefault()
}

// Close writes a chain opened with Open to its file, as Sync does, and
// unmaps it; a second Close returns ErrClosed. Afterwards lookups report
// true and adds false.
func (f *Filter) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	err := f.sync()
	if err == ErrClosed {
		return err
	}
	f.closed.Store(true)
	if f.store != nil {
		if cerr := f.store.Close(f.count.Load()); err == nil {
			err = cerr
		}
	}
	return err
}
