package gnndrive

// Early release (a departure from GNNDrive §4.1 ⑧, recorded as a
// deviation). The paper's trainer enqueues a mini-batch's node list into
// the releasing queue after training it, so its buffer slots stay pinned
// for the whole step although the trainer reads them only to build the
// batch input (x = buffer[aliases]). Under a budget that holds one
// extractor's N_e × M_b reservation and little more, the pinned batch
// leaves the extractor no slots for the next one: extraction waits for
// each training step (slot_wait_s) and the two never overlap. Releasing
// the nodes as soon as the rows were read (after the copy; with the
// aliased batch input, after the first layer's forward, nn.Indexed's
// Consumed) lets the extractor load the next batch while the step goes
// on, with the same memory. Option release: after_step (the paper),
// after_input, or auto (after_input exactly when the batch input is
// aliased, i.e. when the budget is tight).

// releaseEarly decides whether the trainer releases a batch's nodes as
// soon as its rows were read.
func releaseEarly(release string, aliased bool) bool {
	return release == "after_input" || (release == "auto" && aliased)
}

// earlyReleaseDeviation is the deviation an early-releasing run records.
const earlyReleaseDeviation = "the trainer releases a mini-batch's nodes as soon as its rows were read out of the feature buffer (release=after_input), not after training it (§4.1 ⑧), so that the extractor loads the next batch during the step with the same buffer"
