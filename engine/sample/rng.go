package sample

import "math/bits"

// splitmix64 is one step of the SplitMix64 generator, used to mix
// (seed, epoch, batch) into independent per-batch RNG seeds.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// BatchSeed derives the RNG seed of one batch from the run seed, the epoch and
// the batch index. Different streams (sampling, shuffling, dropout) pass
// different stream tags so they never share random numbers.
func BatchSeed(seed int64, stream uint64, epoch, batch int) uint64 {
	h := splitmix64(uint64(seed) ^ 0x6a09e667f3bcc909)
	h = splitmix64(h ^ stream)
	h = splitmix64(h ^ uint64(int64(epoch)))
	return splitmix64(h ^ uint64(int64(batch)))
}

// Stream tags for BatchSeed.
const (
	StreamSample  uint64 = 1
	StreamShuffle uint64 = 2
)

// rng is xoshiro256** — small, fast, and seedable in place without allocation.
type rng struct{ s0, s1, s2, s3 uint64 }

// seed resets the generator from one 64-bit seed (expanded by SplitMix64).
func (r *rng) seed(s uint64) {
	s = splitmix64(s)
	r.s0 = s
	s = splitmix64(s)
	r.s1 = s
	s = splitmix64(s)
	r.s2 = s
	s = splitmix64(s)
	r.s3 = s
	if r.s0|r.s1|r.s2|r.s3 == 0 {
		r.s0 = 1
	}
}

// next returns 64 random bits.
func (r *rng) next() uint64 {
	res := bits.RotateLeft64(r.s1*5, 7) * 9
	t := r.s1 << 17
	r.s2 ^= r.s0
	r.s3 ^= r.s1
	r.s1 ^= r.s2
	r.s0 ^= r.s3
	r.s2 ^= t
	r.s3 = bits.RotateLeft64(r.s3, 45)
	return res
}

// below returns a uniform integer in [0, n) (Lemire's multiply-and-reject), n > 0.
func (r *rng) below(n uint64) uint64 {
	hi, lo := bits.Mul64(r.next(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(r.next(), n)
		}
	}
	return hi
}
