package sample

// Shuffle returns a copy of ids in the order of a Fisher–Yates shuffle
// determined by (seed, epoch): the same arguments give the same order.
func Shuffle(ids []int64, seed int64, epoch int) []int64 {
	out := make([]int64, len(ids))
	copy(out, ids)
	var r rng
	r.seed(BatchSeed(seed, StreamShuffle, epoch, 0))
	for i := len(out) - 1; i > 0; i-- {
		j := r.below(uint64(i + 1))
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// Split cuts ids into consecutive batches of size batchSize (the last may be
// shorter). The batches alias ids. batchSize <= 0 gives one batch.
func Split(ids []int64, batchSize int) [][]int64 {
	if len(ids) == 0 {
		return nil
	}
	if batchSize <= 0 || batchSize >= len(ids) {
		return [][]int64{ids}
	}
	out := make([][]int64, 0, (len(ids)+batchSize-1)/batchSize)
	for lo := 0; lo < len(ids); lo += batchSize {
		out = append(out, ids[lo:min(lo+batchSize, len(ids))])
	}
	return out
}

// EpochBatches is Split(Shuffle(ids, seed, epoch), batchSize): the training
// batches of one epoch, batch i being the seeds of MiniBatch.Index i.
func EpochBatches(ids []int64, batchSize int, seed int64, epoch int) [][]int64 {
	return Split(Shuffle(ids, seed, epoch), batchSize)
}
