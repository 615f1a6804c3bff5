// Package accel is the accelerator stand-in of `--compute` (DESIGN §10):
// the compute modes of a run (cpu, none, model:PROFILE), the accelerator
// profiles that model:PROFILE names (JSON files embedded from profiles/,
// each with its provenance: derived from a data sheet, or measured on a
// real GPU and fitted), the shape of one training step (input rows, edges
// and nodes per layer, dimensions, model) and the step-time model over it
// (FLOPs, bytes copied host-to-device, kernels launched), and the fit of
// that model to measured steps.
//
// It imports nothing of the trainer: engine/train maps a mini-batch and
// its configuration to a StepShape and asks a Profile for the step time.
package accel
