#include "textflag.h"

// The eight lane multipliers (salt0..salt7 of split.go), lane i at bytes 4i.
DATA splitSaltVec<>+0(SB)/4, $0x47b6137b
DATA splitSaltVec<>+4(SB)/4, $0x44974d91
DATA splitSaltVec<>+8(SB)/4, $0x8824ad5b
DATA splitSaltVec<>+12(SB)/4, $0xa2b7289d
DATA splitSaltVec<>+16(SB)/4, $0x705495c7
DATA splitSaltVec<>+20(SB)/4, $0x2df1424b
DATA splitSaltVec<>+24(SB)/4, $0x9efc4947
DATA splitSaltVec<>+28(SB)/4, $0x5c6bfb31
GLOBL splitSaltVec<>(SB), RODATA|NOPTR, $32

// func splitContainsAVX2(blk *[4]uint64, x uint32) bool
// The eight lane bits of x in one vector (broadcast, multiply by the
// multipliers, shift right 27, shift 1 left by each), tested against the
// block with one VPTEST: CF is set when no mask bit is clear in the block.
TEXT ·splitContainsAVX2(SB), NOSPLIT, $0-17
	MOVQ         blk+0(FP), AX
	MOVL         x+8(FP), BX
	MOVL         BX, X0
	VPBROADCASTD X0, Y0
	VPMULLD      splitSaltVec<>(SB), Y0, Y0
	VPSRLD       $27, Y0, Y0
	VPCMPEQD     Y1, Y1, Y1
	VPSRLD       $31, Y1, Y1
	VPSLLVD      Y0, Y1, Y0
	VMOVDQU      (AX), Y1
	VPTEST       Y0, Y1
	SETCS        ret+16(FP)
	VZEROUPPER
	RET

// func splitContainsBatchAVX2(words *uint64, blocks uint64, ds *hashing.Digest, n int, found *bool)
// splitContainsAVX2 for the n digests at ds (16 bytes each: H1, then H2,
// whose high half is the lane key), in one loop without a call per key:
// found[i] is whether all eight bits of ds[i] are set in its block
// (block hi64(H1 × blocks), 32 bytes, at words). n may be 0.
TEXT ·splitContainsBatchAVX2(SB), NOSPLIT, $0-40
	MOVQ         words+0(FP), SI
	MOVQ         blocks+8(FP), R8
	MOVQ         ds+16(FP), DI
	MOVQ         n+24(FP), CX
	MOVQ         found+32(FP), R9
	VMOVDQU      splitSaltVec<>(SB), Y2
	VPCMPEQD     Y3, Y3, Y3
	VPSRLD       $31, Y3, Y3
	TESTQ        CX, CX
	JZ           done

loop:
	MOVQ         0(DI), AX
	MULQ         R8
	SHLQ         $5, DX
	VPBROADCASTD 12(DI), Y0
	VPMULLD      Y2, Y0, Y0
	VPSRLD       $27, Y0, Y0
	VPSLLVD      Y0, Y3, Y0
	VMOVDQU      (SI)(DX*1), Y1
	VPTEST       Y0, Y1
	SETCS        (R9)
	ADDQ         $16, DI
	INCQ         R9
	DECQ         CX
	JNZ          loop

done:
	VZEROUPPER
	RET
