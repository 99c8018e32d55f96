#include "textflag.h"

// func blocksAsm(words *uint64, blocks, shift uint64, ds *hashing.Digest, n int)
// One PREFETCHT0 for each of the n digests at ds (n > 0), of
// words + (Reduce(H1, blocks) << shift), Reduce being the high word of
// H1 * blocks. A prefetch never faults.
TEXT ·blocksAsm(SB), NOSPLIT, $0-40
	MOVQ words+0(FP), SI
	MOVQ blocks+8(FP), R8
	MOVQ shift+16(FP), CX
	MOVQ ds+24(FP), DI
	MOVQ n+32(FP), R9

blocksLoop:
	MOVQ       (DI), AX
	MULQ       R8
	SHLQ       CX, DX
	PREFETCHT0 (SI)(DX*1)
	ADDQ       $16, DI
	DECQ       R9
	JNE        blocksLoop
	RET

// func positionsAsm(words *uint64, m, k uint64, ds *hashing.Digest, n int)
// For each of the n digests at ds (n > 0), and each j < k (k > 0), a
// PREFETCHT0 of the word of bit Reduce(H1 + j*H2, m) of words.
TEXT ·positionsAsm(SB), NOSPLIT, $0-40
	MOVQ words+0(FP), SI
	MOVQ m+8(FP), R8
	MOVQ k+16(FP), R10
	MOVQ ds+24(FP), DI
	MOVQ n+32(FP), R9

positionsKey:
	MOVQ (DI), BX   // h = H1
	MOVQ 8(DI), R11 // H2
	MOVQ R10, CX

positionsProbe:
	MOVQ       BX, AX
	MULQ       R8
	SHRQ       $6, DX
	PREFETCHT0 (SI)(DX*8)
	ADDQ       R11, BX
	DECQ       CX
	JNE        positionsProbe
	ADDQ       $16, DI
	DECQ       R9
	JNE        positionsKey
	RET
