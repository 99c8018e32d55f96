#include "textflag.h"

// func prefetchBlocks(words *uint64, blocks, shift uint64, ds *hashing.Digest, n int)
// One PREFETCHT0 for each of the n digests at ds, of the first byte of its
// block: words + (Reduce(H1, blocks) << shift), Reduce being the high word
// of H1 * blocks. A prefetch never faults and nothing waits for it.
TEXT ·prefetchBlocks(SB), NOSPLIT, $0-40
	MOVQ words+0(FP), SI
	MOVQ blocks+8(FP), R8
	MOVQ shift+16(FP), CX
	MOVQ ds+24(FP), DI
	MOVQ n+32(FP), R9
	TESTQ R9, R9
	JEQ  done

loop:
	MOVQ       (DI), AX
	MULQ       R8
	SHLQ       CX, DX
	PREFETCHT0 (SI)(DX*1)
	ADDQ       $16, DI
	DECQ       R9
	JNE        loop

done:
	RET
