//go:build !race

package mariusgnn

const raceEnabled = false
