// Package graph holds the message-flow structures shared by the sampler,
// the neural-network layers and every system variant.
package graph

// Block is the bipartite message-flow graph of one GNN layer. Its
// destination nodes are the first NumDst of its NumSrc source nodes
// ("targets first"), so a layer's output for dst i can use its own input row
// i. The in-neighbours of destination i are the local source ids
// Indices[Indptr[i]:Indptr[i+1]].
type Block struct {
	NumSrc  int
	NumDst  int
	Indptr  []int32 // len NumDst+1
	Indices []int32 // local source ids, each < NumSrc
	// SrcDeg and DstDeg, when set, are the in-degrees in the full graph of
	// each source / destination node (GCN normalisation); len NumSrc / NumDst.
	SrcDeg []int32
	DstDeg []int32
}

// MiniBatch is one sampled mini-batch: its seed (target) nodes and the blocks
// that carry messages from the input nodes to them.
type MiniBatch struct {
	Epoch int
	Index int     // batch number within the epoch
	Seeds []int64 // global ids of the output nodes, in order
	// InputNodes are the global ids of Blocks[0]'s source nodes, in local-id
	// order: the feature rows to gather. Seeds are its first len(Seeds) entries.
	InputNodes []int64
	// Blocks[0] consumes the input features; Blocks[len-1] produces the seeds.
	Blocks []Block
}
