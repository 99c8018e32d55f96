package blocked

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bloomkit/bloomkit/internal/hashing"
)

// TestKeyedMatchesDigestPath pins the keyed paths (hash in line, probe in
// the same function) to the Digest functions: for both schemes, k from 1
// to 20 (both probe walks), small and large tables (both lookup loops) and
// keys of every length class, AddKey, AddKeyPlain and Add of the digest
// set the same bits, and ContainsKey answers as Contains for added and
// never-added keys.
func TestKeyedMatchesDigestPath(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	key := make([]byte, 300)
	for _, scheme := range []hashing.Scheme{hashing.Scheme1, hashing.Scheme2} {
		for _, blocks := range []uint64{1, 37, smallWords/BlockWords + 1} {
			for _, k := range []uint32{1, 2, 3, 4, 5, 6, 7, 8, 9, 14, 20} {
				seed := r.Uint64()
				a := Filter{Words: AlignedWords(blocks * BlockWords), Blocks: blocks, K: k}
				b := Filter{Words: AlignedWords(blocks * BlockWords), Blocks: blocks, K: k}
				h := hashing.NewHasher(scheme, seed)
				ref := AlignedWords(blocks * BlockWords)
				for i := range 300 {
					n := r.IntN(len(key))
					if i%3 == 0 {
						n = 9 + r.IntN(8)
					}
					for j := range key[:n] {
						key[j] = byte(r.Uint32())
					}
					kk := key[:n]
					d := scheme.Sum(kk, seed)
					wantNew := over(ref, blocks, k).Add(d)
					if got := a.AddKey(&h, kk); got != wantNew {
						t.Fatalf("scheme %d, %d blocks, k=%d: AddKey = %v, Add = %v", scheme, blocks, k, got, wantNew)
					}
					if got := b.AddKeyPlain(&h, kk); got != wantNew {
						t.Fatalf("scheme %d, %d blocks, k=%d: AddKeyPlain = %v, Add = %v", scheme, blocks, k, got, wantNew)
					}
					if !a.ContainsKey(&h, kk) {
						t.Fatalf("scheme %d, %d blocks, k=%d: an added %d-byte key is absent", scheme, blocks, k, n)
					}
				}
				if !slices.Equal(a.Words, ref) || !slices.Equal(b.Words, ref) {
					t.Fatalf("scheme %d, %d blocks, k=%d: the keyed adds set other bits than Add", scheme, blocks, k)
				}
				for range 2000 {
					n := r.IntN(140)
					for j := range key[:n] {
						key[j] = byte(r.Uint32())
					}
					kk := key[:n]
					if got, want := a.ContainsKey(&h, kk), over(ref, blocks, k).Contains(scheme.Sum(kk, seed)); got != want {
						t.Fatalf("scheme %d, %d blocks, k=%d: ContainsKey = %v, Contains = %v", scheme, blocks, k, got, want)
					}
				}
			}
		}
	}
}

// TestClosedFilterKeyed: a table whose words are gone (a closed filter) rules
// nothing out and writes nothing.
func TestClosedFilterKeyed(t *testing.T) {
	for _, scheme := range []hashing.Scheme{hashing.Scheme1, hashing.Scheme2} {
		tb := Filter{Blocks: 10, K: 6}
		h := hashing.NewHasher(scheme, 1)
		for _, key := range []string{"", "short", "exactly16bytes!!", "a key longer than sixteen bytes, URL-like"} {
			if !tb.ContainsKey(&h, []byte(key)) {
				t.Errorf("scheme %d: closed ContainsKey(%q) = false", scheme, key)
			}
			if tb.AddKey(&h, []byte(key)) || tb.AddKeyPlain(&h, []byte(key)) {
				t.Errorf("scheme %d: closed add of %q reported new", scheme, key)
			}
		}
	}
}
