package vocab

// The log lines of a run's records the run page reads (web's
// ioFloorFact): a run that started before its storage was measured, and
// the event of a floor filled in afterwards (experiments.FillIOFloors);
// engine/devprofile writes them.
const (
	NoFloorYet    = "no I/O floor yet:"
	FloorFilledIn = "I/O floor filled in for"
)
