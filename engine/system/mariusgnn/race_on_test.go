//go:build race

package mariusgnn

// raceEnabled: the race detector's shadow memory is counted in the
// process's resident memory, so in-process runs near a budget's floor
// measure a larger base than they would without it.
const raceEnabled = true
