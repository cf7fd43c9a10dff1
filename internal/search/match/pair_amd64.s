#include "textflag.h"

// func indexPairSIMD(p1, p2 *byte, n int, b1, m1, b2, m2 byte) int
TEXT ·indexPairSIMD(SB), NOSPLIT, $0-40
	MOVQ    p1+0(FP), SI
	MOVQ    p2+8(FP), DI
	MOVQ    n+16(FP), CX
	MOVBLZX b1+24(FP), AX
	MOVQ    AX, X0
	VPBROADCASTB X0, Y0        // Y0 = b1
	MOVBLZX m1+25(FP), AX
	MOVQ    AX, X1
	VPBROADCASTB X1, Y1        // Y1 = m1
	MOVBLZX b2+26(FP), AX
	MOVQ    AX, X2
	VPBROADCASTB X2, Y2        // Y2 = b2
	MOVBLZX m2+27(FP), AX
	MOVQ    AX, X3
	VPBROADCASTB X3, Y3        // Y3 = m2
	XORQ    R8, R8             // i
loop:
	LEAQ    32(R8), R9
	CMPQ    R9, CX
	JA      notfound
	VMOVDQU (SI)(R8*1), Y4
	VMOVDQU (DI)(R8*1), Y5
	VPOR    Y1, Y4, Y4
	VPOR    Y3, Y5, Y5
	VPCMPEQB Y0, Y4, Y4
	VPCMPEQB Y2, Y5, Y5
	VPAND   Y4, Y5, Y4
	VPMOVMSKB Y4, R10
	TESTL   R10, R10
	JNZ     found
	MOVQ    R9, R8
	JMP     loop
found:
	BSFL    R10, R10
	ADDQ    R10, R8
	MOVQ    R8, ret+32(FP)
	VZEROUPPER
	RET
notfound:
	MOVQ    $-1, ret+32(FP)
	VZEROUPPER
	RET
