package metrics

import "strings"

// Stages nest: a stage timed inside another is part of it, not beside it.
// Env.TrainStep times the whole step as train_s and the trainer's forward
// and backward passes inside it, so forward_s + backward_s ≤ train_s, and
// adding all three counts training twice. A stage breakdown stacks only the
// top-level stages and shows a nested stage as a share of its parent
// (DESIGN §5, §6). Variants that time stages inside their own stages
// declare those pairs in their registry entry (train.Variant.NestedStages).

// NestedStages maps each stage every variant times inside another stage to
// that parent stage.
var NestedStages = map[string]string{
	StageForward:  StageTrain,
	StageBackward: StageTrain,
}

// StageParent returns the stage name is timed inside ("" for a top-level
// stage): extra (a variant's own pairs) first, then NestedStages.
func StageParent(name string, extra map[string]string) string {
	if p, ok := extra[name]; ok {
		return p
	}
	return NestedStages[name]
}

// StageLabel is a stage name for people: "train" for "train_s".
func StageLabel(name string) string { return strings.TrimSuffix(name, "_s") }
