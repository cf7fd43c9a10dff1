//go:build !amd64

package match

const pairBlock = 32

const hasPairSIMD = false

func indexPairSIMD(p1, p2 *byte, n int, b1, m1, b2, m2 byte) int { return -1 }
