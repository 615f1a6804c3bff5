// Package sample draws GraphSAGE-style mini-batches: uniform neighbour
// sampling without replacement, one fanout per hop, into per-layer
// graph.Blocks in local ids (targets first) plus the unique input nodes whose
// feature rows must be gathered.
//
// Fanout order is hop order (the PyG convention): Fanouts[0] is how many
// in-neighbours each seed gets, Fanouts[1] how many each of those gets, and
// so on; -1 takes all in-neighbours. MiniBatch.Blocks are in layer order, so
// Blocks[len-1] (the output layer) was built with Fanouts[0].
//
// Sampling is a pure function of (seed, epoch, batch index, seed nodes): each
// batch draws from its own RNG derived from those numbers, so batches can be
// sampled in any order, by any number of workers, and still match. A Sampler
// holds scratch memory and is not safe for concurrent use; give each worker
// its own (Sampler.Clone shares the read-only topology).
package sample
