package kit

import (
	"cmp"
	"slices"
)

// TopK is the ids (indices into score) of the k highest scores, highest
// first, ties to the lower id; k is clamped to [0, len(score)]. It picks
// what a static cache pins: GIDS's CPU buffer by reverse PageRank,
// Ginex's PaGraph baseline by out-degree.
func TopK[T cmp.Ordered](score []T, k int) []int64 {
	k = min(max(k, 0), len(score))
	ids := make([]int64, len(score))
	for i := range ids {
		ids[i] = int64(i)
	}
	slices.SortFunc(ids, func(a, b int64) int {
		switch {
		case score[a] > score[b]:
			return -1
		case score[a] < score[b]:
			return 1
		}
		return cmp.Compare(a, b)
	})
	return ids[:k:k]
}
