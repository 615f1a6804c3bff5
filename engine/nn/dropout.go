package nn

// Dropout masks are counter-based: element i of a tensor at (seed, step,
// site) is kept iff a 16-bit slice of splitmix64(key, i/4) is ≥ p·65536.
// The mask is therefore deterministic for a seed, independent of how many
// goroutines compute it, and is recomputed in the backward pass instead of
// being stored. p is effectively quantised to 1/65536.

// splitmix64 is Steele et al.'s 64-bit finaliser.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// DropoutKey derives the mask key for one dropout site in one step.
func DropoutKey(seed, step, site uint64) uint64 {
	return splitmix64(splitmix64(splitmix64(seed)^step) ^ site)
}

// dropThreshold converts p to the 16-bit threshold.
func dropThreshold(p float32) uint32 {
	t := uint32(p*65536 + 0.5)
	return min(t, 65536)
}

// keepBits returns the 64 random bits shared by elements i&^3 … i|3: element
// i uses bits [16·(i&3), 16·(i&3)+16).
func keepBits(key uint64, i int) uint64 { return splitmix64(key ^ uint64(i>>2)*0xd1342543de82ef95) }

// Dropout applies inverted dropout in place: each element is zeroed with
// probability p and the rest scaled by 1/(1-p). Use DropoutBackward with the
// same key and p for the gradient.
func Dropout(t *Tensor, p float32, key uint64) {
	dropoutApply(t.Data[:t.Rows*t.Cols], p, key)
}

// DropoutBackward multiplies the gradient by the mask Dropout used.
func DropoutBackward(g *Tensor, p float32, key uint64) {
	dropoutApply(g.Data[:g.Rows*g.Cols], p, key)
}

func dropoutApply(d []float32, p float32, key uint64) {
	if p <= 0 {
		return
	}
	thr := dropThreshold(p)
	scale := 1 / (1 - p)
	if p >= 1 {
		scale = 0
	}
	n := len(d)
	// branch-free: a data-dependent branch mispredicts half the time
	tbl := [2]float32{scale, 0}
	parallelFor((n+3)/4, 1<<14, func(lo, hi int) {
		q := lo
		for ; q < hi && q*4+4 <= n; q++ {
			bits := keepBits(key, q*4)
			s := d[q*4 : q*4+4 : q*4+4]
			s[0] *= tbl[dropBit(bits, thr)]
			s[1] *= tbl[dropBit(bits>>16, thr)]
			s[2] *= tbl[dropBit(bits>>32, thr)]
			s[3] *= tbl[dropBit(bits>>48, thr)]
		}
		for ; q < hi; q++ { // the ragged tail
			bits := keepBits(key, q*4)
			for k := 0; k < 4 && q*4+k < n; k++ {
				d[q*4+k] *= tbl[dropBit(bits>>(16*k), thr)]
			}
		}
	})
}

// dropBit is 1 when the low 16 bits of bits fall below thr (dropped).
func dropBit(bits uint64, thr uint32) uint32 { return (uint32(bits&0xffff) - thr) >> 31 }

// DropoutKeep reports whether element i is kept under (p, key); tests use it.
func DropoutKeep(i int, p float32, key uint64) bool {
	bits := keepBits(key, i&^3)
	return uint32(bits>>(16*(i&3)))&0xffff >= dropThreshold(p)
}
