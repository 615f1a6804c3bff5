package graph

// Bytes is the memory the mini-batch's slices hold (their capacities), for
// budgets that count mini-batches in flight.
func (mb *MiniBatch) Bytes() int64 {
	n := int64(cap(mb.Seeds)+cap(mb.InputNodes)) * 8
	for _, b := range mb.Blocks {
		n += int64(cap(b.Indptr)+cap(b.Indices)+cap(b.SrcDeg)+cap(b.DstDeg)) * 4
	}
	return n
}
