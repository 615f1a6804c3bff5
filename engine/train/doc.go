// Package train holds what every system variant shares: the run
// configuration (Config), the trainer (model + Adam, one Step per
// mini-batch, evaluation, best-validation tracking), the variant seam
// (System, registered by name), and the runner (Run) that emits the run's
// JSON-lines records: start, per-second samples, progress, one epoch record
// per epoch with the DESIGN §5 fields, and the summary.
//
// A variant is a System: Prepare runs its offline phases once (timed and
// reported), RunEpoch owns one epoch's pipeline (sampling, gathering, caching,
// reordering; any number of goroutines) and hands each ready mini-batch to
// Env.TrainStep, which trains it and records the stage times. Batches may be
// trained in any order (GNNDrive's out-of-order batches) and drawn from any
// source (Ginex's superbatches, DiskGNN's pre-packed batches, MariusGNN's
// buffered partitions), as long as each is a graph.MiniBatch with the feature
// rows of its InputNodes.
//
// The plain pipeline every variant is compared against is "reference"
// (reference.go): sample → gather (O_DIRECT storage reads) → train, one batch
// at a time.
package train
