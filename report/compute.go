package report

import "outcore/store"

// Trains reports whether a run of compute mode c trained a model, so that
// its losses and accuracies are measurements (DESIGN §10); "" is a run
// stored or built without the mode: cpu.
func Trains(c string) bool { return c == "" || c == store.ComputeCPU }

// computeWord is a compute mode as the views write it.
func computeWord(c string) string {
	if c == "" {
		return store.ComputeCPU
	}
	return c
}
