package match

import "golang.org/x/sys/cpu"

// pairBlock is the number of positions the vector loop tests at once.
const pairBlock = 32

var hasPairSIMD = cpu.X86.HasAVX2

// indexPairSIMD tests positions [0, n - n%32) with AVX2 and returns the
// first match or -1. p1 and p2 point at the two compared bytes of
// position 0; 32 bytes from p1+i and p2+i must be readable for every
// tested i.
//
//go:noescape
func indexPairSIMD(p1, p2 *byte, n int, b1, m1, b2, m2 byte) int
