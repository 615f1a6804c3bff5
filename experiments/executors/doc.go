// Package executors is the executor seam (docs/ARCHITECTURE.md
// "Executors" and "Adding an executor"): what an executor is to the queue
// (Executor, launching a Run for a Host and handing back its Job, which
// the queue's one loop follows to the run's outcome)
// and the registry through which an executor outside the queue's package
// makes itself known — its name, its grid options' check, its command-line
// flags and its constructor (Registration). A leaf: the queue (package
// experiments), the grid language (experiments/grid, which checks only
// that an executor is registered and hands the grid's options block to
// its CheckOptions) and the command line import it; no executor's own
// words appear outside the executor's package.
package executors
