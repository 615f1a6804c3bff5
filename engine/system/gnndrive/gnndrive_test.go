package gnndrive

import (
	"slices"
	"strings"
	"testing"

	"outcore/engine/metrics"
	"outcore/engine/system/systest"
)

// TestGNNDriveSmallBuffer runs GNNDrive with a buffer at the N_e × M_b
// reservation, so slots are reused all the time.
func TestGNNDriveSmallBuffer(t *testing.T) {
	cfg := systest.Config(t, Name, map[string]string{"buffer_factor": "0.01", "extractors": "3", "samplers": "3"})
	r := systest.Run(t, cfg)
	var ev int64
	for _, e := range r.Epochs {
		ev += e.Counters["buffer_evictions"]
		if e.Tiers[metrics.TierCPU].Lookups == 0 {
			t.Fatalf("no buffer lookups: %+v", e.Tiers)
		}
	}
	if ev == 0 {
		t.Fatal("no slot was ever reused: the buffer was not small")
	}
}

// TestGNNDriveAliasInput: reading the batch input through the alias list
// (batch_input=alias) trains exactly what the gathered copy trains (the
// same losses in the standard batch order), records the deviation, and
// spends no time assembling x.
func TestGNNDriveAliasInput(t *testing.T) {
	run := func(input string) systest.Result {
		return systest.Run(t, systest.Config(t, Name, map[string]string{"samplers": "1", "extractors": "1", "batch_input": input}))
	}
	gathered, aliased := run("gather"), run("alias")
	if g, a := gathered.Losses(), aliased.Losses(); !slices.Equal(g, a) {
		t.Fatalf("losses gathered %v, aliased %v", g, a)
	}
	if !systest.HasDeviation(aliased.Summary.Deviations, "through the node alias list") {
		t.Fatalf("no alias deviation in %q", aliased.Summary.Deviations)
	}
	if systest.HasDeviation(gathered.Summary.Deviations, "through the node alias list") {
		t.Fatal("the gathered run records the alias deviation")
	}
	for i, e := range aliased.Epochs {
		if e.Stages["index_s"] != 0 {
			t.Fatalf("epoch %d: index_s %v with the alias list", i, e.Stages["index_s"])
		}
		if gathered.Epochs[i].Stages["index_s"] == 0 {
			t.Fatalf("epoch %d: no index_s with the gathered copy", i)
		}
	}
}

// TestSampleOnly: with stages=sample an epoch samples every batch and
// trains none, and says so (systest.CheckSampleOnly).
func TestSampleOnly(t *testing.T) { systest.CheckSampleOnly(t, Name) }

// TestEarlyRelease: releasing a batch's nodes as soon as its rows were
// read (after the copy, or after the first layer with the aliased input)
// trains exactly what the paper's release after the step trains, and
// records the deviation; the buffer ends each epoch quiescent (RunEpoch
// checks every reference was released once).
func TestEarlyRelease(t *testing.T) {
	run := func(opts map[string]string) systest.Result {
		o := map[string]string{"samplers": "1", "extractors": "1", "buffer_factor": "0.01"}
		for k, v := range opts {
			o[k] = v
		}
		return systest.Run(t, systest.Config(t, Name, o))
	}
	paper := run(map[string]string{"release": "after_step"})
	for _, opts := range []map[string]string{
		{"release": "after_input"},
		{"release": "after_input", "batch_input": "alias"},
		{"batch_input": "alias"}, // auto: early with the aliased input
	} {
		r := run(opts)
		if a, b := paper.Losses(), r.Losses(); !slices.Equal(a, b) {
			t.Fatalf("%v: losses %v, the paper's release %v", opts, b, a)
		}
		if !systest.HasDeviation(r.Summary.Deviations, "release=after_input") {
			t.Errorf("%v: no early-release deviation in %q", opts, r.Summary.Deviations)
		}
	}
	if systest.HasDeviation(paper.Summary.Deviations, "release=after_input") {
		t.Error("release=after_step records the early-release deviation")
	}
	if releaseEarly("auto", false) || !releaseEarly("auto", true) || releaseEarly("after_step", true) || !releaseEarly("after_input", false) {
		t.Error("releaseEarly's table")
	}
}

// Read merging (storage's planner), merge=true, is a recorded deviation;
// merge=false, the default (the artifact's), issues one request per row
// (blocks that rows share read once): the same batches train to the same
// losses with no fewer device requests, and the deviation is gone.
func TestMergeOption(t *testing.T) {
	run := func(merge string) systest.Result {
		opts := map[string]string{"samplers": "1", "extractors": "1"}
		if merge != "" {
			opts["merge"] = merge
		}
		cfg := systest.Config(t, Name, opts)
		cfg.Epochs = 1
		systest.Evict(t)
		return systest.Run(t, cfg)
	}
	on, off, def := run("true"), run("false"), run("")
	if !slices.Equal(on.Losses(), off.Losses()) {
		t.Fatalf("losses with merging %v, without %v", on.Losses(), off.Losses())
	}
	ron, roff := on.Epochs[0].Counters["io_requests"], off.Epochs[0].Counters["io_requests"]
	if ron == 0 || roff < ron {
		t.Fatalf("device requests: %d merged, %d one per row", ron, roff)
	}
	has := func(r systest.Result) bool {
		for _, d := range r.Summary.Deviations {
			if strings.HasPrefix(d, "merge=true") {
				return true
			}
		}
		return false
	}
	if !has(on) || has(off) || has(def) {
		t.Fatalf("merge deviation: with merging %v, without %v, by default %v", on.Summary.Deviations, off.Summary.Deviations, def.Summary.Deviations)
	}
	if rdef := def.Epochs[0].Counters["io_requests"]; rdef != roff || !slices.Equal(def.Losses(), off.Losses()) {
		t.Fatalf("default: %d device requests, losses %v; merge=false %d, %v", rdef, def.Losses(), roff, off.Losses())
	}
	t.Logf("device requests: %d merged, %d one per row", ron, roff)
}
