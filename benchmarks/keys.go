package benchmarks

import (
	"encoding/binary"
	"fmt"
)

// KeyKind names a shape of key.
type KeyKind int

const (
	// Key16 keys are 16 bytes that look random.
	Key16 KeyKind = iota
	// URL60 keys are 60-byte URL-like strings: a scheme, one of 10,000 hosts,
	// a fixed path prefix, a 16-digit hex item id and a query parameter.
	// Long shared prefixes are what real URL sets look like, and they are
	// where a weak hash shows.
	URL60
)

// KeyKinds lists every key shape, in table order.
var KeyKinds = []KeyKind{Key16, URL60}

// Len is the length in bytes of a key of kind k.
func (k KeyKind) Len() int {
	if k == URL60 {
		return 60
	}
	return 16
}

// String is the name used in benchmark names and tables: "16B" or "url60B".
func (k KeyKind) String() string {
	if k == URL60 {
		return "url60B"
	}
	return "16B"
}

// ParseKeyKind is the inverse of String; it also takes "16" and "60".
func ParseKeyKind(s string) (KeyKind, error) {
	switch s {
	case "16B", "16":
		return Key16, nil
	case "url60B", "url60", "60B", "60":
		return URL60, nil
	}
	return 0, fmt.Errorf("unknown key kind %q (want 16B or url60B)", s)
}

// Key sets. Keys of different sets never coincide.
const (
	SetPositive = 1 // the keys added to a filter
	SetNegative = 2 // keys never added: misses and false-positive counts
)

// maxIndex bounds the index of a key within its set.
const maxIndex = 1 << 56

// splitMix is the splitmix64 finalizer, a bijection on uint64.
func splitMix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// id is a distinct value for every (set, i) with i < 2^56: splitMix is a
// bijection, and set<<56|i is distinct for distinct pairs.
func id(set, i uint64) uint64 { return splitMix(set<<56 | i) }

const hexDigits = "0123456789abcdef"

// Key writes key i of set in shape kind into dst, which must hold
// kind.Len() bytes, and returns dst[:kind.Len()]. It panics if i >= 2^56.
func Key(dst []byte, kind KeyKind, set, i uint64) []byte {
	if i >= maxIndex {
		panic("benchmarks: key index out of range")
	}
	v := id(set, i)
	if kind == Key16 {
		binary.LittleEndian.PutUint64(dst[0:], splitMix(v^0x6a09e667f3bcc909))
		binary.LittleEndian.PutUint64(dst[8:], v)
		return dst[:16]
	}
	// https://www.site0042.com/items/0123456789abcdef/page?ref=123
	// 8 + 8 + 4 + 11 + 16 + 10 + 3 = 60 bytes.
	b := dst[:0]
	b = append(b, "https://www.site"...)
	host := splitMix(v) % 10000
	b = append(b, byte('0'+host/1000), byte('0'+host/100%10), byte('0'+host/10%10), byte('0'+host%10))
	b = append(b, ".com/items/"...)
	for s := 60; s >= 0; s -= 4 {
		b = append(b, hexDigits[v>>uint(s)&15])
	}
	b = append(b, "/page?ref="...)
	ref := v % 1000
	b = append(b, byte('0'+ref/100), byte('0'+ref/10%10), byte('0'+ref%10))
	return b
}

// KeySet is keys of one length laid out back to back. It has no slice
// header per key, so a million keys are one pointer to the garbage
// collector, and the lookup loops slice them out as they go.
type KeySet struct {
	flat []byte
	l    int
}

// NewKeySet returns keys from, from+1, ..., from+count-1 of set.
func NewKeySet(kind KeyKind, set, from uint64, count int) KeySet {
	s := KeySet{make([]byte, count*kind.Len()), kind.Len()}
	for j := range count {
		Key(s.flat[j*s.l:], kind, set, from+uint64(j))
	}
	return s
}

// Len is the number of keys.
func (s KeySet) Len() int {
	if s.l == 0 {
		return 0
	}
	return len(s.flat) / s.l
}

// At returns key i.
func (s KeySet) At(i int) []byte { return s.flat[i*s.l : (i+1)*s.l : (i+1)*s.l] }

// Source yields the keys in chunks of ChunkKeys.
func (s KeySet) Source() KeySource {
	return &setSource{set: s, chunk: make([][]byte, min(s.Len(), ChunkKeys))}
}

type setSource struct {
	set   KeySet
	next  int
	chunk [][]byte
}

func (s *setSource) Next() [][]byte {
	c := min(len(s.chunk), s.set.Len()-s.next)
	if c <= 0 {
		return nil
	}
	for j := range c {
		s.chunk[j] = s.set.At(s.next + j)
	}
	s.next += c
	return s.chunk[:c]
}

// KeyStream yields the keys of one set in chunks, reusing one buffer, so a
// billion keys need no more memory than one chunk.
type KeyStream struct {
	kind  KeyKind
	set   uint64
	next  uint64
	end   uint64
	flat  []byte
	chunk [][]byte
}

// ChunkKeys is the number of keys a KeyStream yields at a time.
const ChunkKeys = 1 << 16

// NewKeyStream streams keys from, ..., from+count-1 of set.
func NewKeyStream(kind KeyKind, set, from, count uint64) *KeyStream {
	l := kind.Len()
	c := min(count, ChunkKeys)
	s := &KeyStream{kind: kind, set: set, next: from, end: from + count,
		flat: make([]byte, c*uint64(l)), chunk: make([][]byte, c)}
	for j := range s.chunk {
		s.chunk[j] = s.flat[j*l : (j+1)*l]
	}
	return s
}

// Next returns the next chunk of keys, or nil when the stream is done. The
// chunk is valid until the following call.
func (s *KeyStream) Next() [][]byte {
	if s.next >= s.end {
		return nil
	}
	c := min(uint64(len(s.chunk)), s.end-s.next)
	for j := range c {
		Key(s.chunk[j], s.kind, s.set, s.next+j)
	}
	s.next += c
	return s.chunk[:c]
}

// KeySource yields keys in chunks; Next returns nil at the end. A chunk is
// valid until the following call.
type KeySource interface {
	Next() [][]byte
}
