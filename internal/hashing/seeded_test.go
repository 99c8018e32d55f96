package hashing

import (
	"math/rand/v2"
	"testing"

	"github.com/zeebo/xxh3"
)

// TestHasherIsXXH3 pins Hasher to the library it stands in for: every
// length 0..300, several seeds (0, small, huge, all ones), random keys.
func TestHasherIsXXH3(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 300)
	for _, seed := range []uint64{0, 1, 12345, 0x9e3779b97f4a7c15, ^uint64(0)} {
		s := NewHasher(Scheme2, seed)
		for n := 0; n <= len(buf); n++ {
			for rep := 0; rep < 8; rep++ {
				for i := range buf[:n] {
					buf[i] = byte(r.Uint32())
				}
				key := buf[:n]
				want := xxh3.HashSeed(key, seed)
				if got := s.Sum64(key); got != want {
					t.Fatalf("seed %#x, %d bytes: Sum64 = %#x, xxh3 = %#x", seed, n, got, want)
				}
			}
		}
	}
}

func FuzzHasher(f *testing.F) {
	f.Add([]byte("https://www.example.com/catalog/item/7364817?ref=home&page=3"), uint64(7))
	f.Fuzz(func(t *testing.T, key []byte, seed uint64) {
		s := NewHasher(Scheme2, seed)
		if got, want := s.Sum64(key), xxh3.HashSeed(key, seed); got != want {
			t.Fatalf("%d bytes, seed %#x: %#x, want %#x", len(key), seed, got, want)
		}
	})
}

// TestHasherSumIsSchemeSum: Hasher.Sum answers as Scheme.Sum for both
// schemes, keys of every length class.
func TestHasherSumIsSchemeSum(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	buf := make([]byte, 300)
	for _, scheme := range []Scheme{Scheme1, Scheme2} {
		for _, seed := range []uint64{0, 99, ^uint64(0)} {
			h := NewHasher(scheme, seed)
			for n := 0; n <= len(buf); n++ {
				for i := range buf[:n] {
					buf[i] = byte(r.Uint32())
				}
				if got, want := h.Sum(buf[:n]), scheme.Sum(buf[:n], seed); got != want {
					t.Fatalf("scheme %d, seed %#x, %d bytes: Sum = %v, Scheme.Sum = %v", scheme, seed, n, got, want)
				}
			}
		}
	}
}
