package vocab

// The log lines of a run's records the run page reads (web's
// ioFloorFact): a run that started before its storage was measured, and
// the event of a floor filled in afterwards (experiments.FillIOFloors);
// engine/devprofile writes them.
const (
	NoFloorYet    = "no I/O floor yet:"
	FloorFilledIn = "I/O floor filled in for"
)

// ExecutorLocal is the name of the executor built into the queue (a child
// process of the queue process in its memory cgroup): the grid's and the
// store's, for runs that name no other executor.
const ExecutorLocal = "local"
