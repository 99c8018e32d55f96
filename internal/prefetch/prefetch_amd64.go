package prefetch

import "github.com/bloomkit/bloomkit/internal/hashing"

// Available: the functions prefetch (prefetch_amd64.s).
const Available = true

//go:noescape
func blocksAsm(words *uint64, blocks, shift uint64, ds *hashing.Digest, n int)

//go:noescape
func positionsAsm(words *uint64, m, k uint64, ds *hashing.Digest, n int)
