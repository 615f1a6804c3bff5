// Package nn is outcore's CPU neural-network engine: float32 tensors, one
// matrix-multiply seam (OpenBLAS through dlopen when present, gonum's pure-Go
// sgemm otherwise), the GraphSAGE, GCN and GAT layers on graph.Block
// message-flow graphs with full backward passes, ReLU/ELU, dropout, softmax
// cross-entropy, Glorot initialisation and Adam with L2 weight decay.
//
// Memory: a Model owns an Arena that is reset at the start of every Forward,
// so after the first few steps a training loop allocates (almost) nothing.
// Tensors returned by Forward/Backward live in that arena and are valid only
// until the next Forward of the same model.
package nn
