package report

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"outcore/engine/metrics"
	"outcore/store"
)

// What makes a comparison unsafe (DESIGN §6, "Find and compare"): runs on
// different data are not points of one sweep, so a comparison across
// experiments on different datasets (or feature dimensions) is refused
// unless asked for, and then flagged on every view; runs measured on
// different hosts, or on a busy host (DESIGN §5 "Host pressure"), are
// flagged.

// Caveats say what makes a comparison unsafe.
type Caveats struct {
	// MixedData names the experiments' different datasets or feature
	// dimensions ("" when they agree): a comparison refuses them unless
	// asked for.
	MixedData string
	// Flags are the other caveats, in words: different hosts, runs
	// measured on a busy host.
	Flags []string
}

// Caveats are the comparison's caveats (the runs' digests and, for a
// comparison across experiments, their data and hosts).
func (c *Comparison) Caveats() Caveats {
	cv := c.caveats
	var busy []string
	for _, r := range c.runs {
		if r.Digest != nil && r.Digest.BusyEpochs > 0 {
			busy = append(busy, fmt.Sprintf("#%d", r.ID))
		}
	}
	if len(busy) > 0 {
		cv.Flags = append(append([]string(nil), cv.Flags...), fmt.Sprintf("%d of %d runs were measured on a busy host (other processes' CPU ≥ %.0f %%, steal ≥ %.0f %% or the dataset's disk ≥ %.0f× slower than its storage profile, able to have cost ≥ %.0f %% of an epoch): runs %s",
			len(busy), len(c.runs), metrics.BusyOthersCPUPct, metrics.BusyStealPct, metrics.DiskSlowFactor, 100*metrics.DiskSlowShare, strings.Join(busy, ", ")))
	}
	return cv
}

// hostLabel names the host a run ran on ("" when unknown).
func hostLabel(raw json.RawMessage) string {
	var h metrics.HostFacts
	if len(raw) == 0 || json.Unmarshal(raw, &h) != nil || h.Hostname == "" {
		return ""
	}
	return fmt.Sprintf("%s (%d cores)", h.Hostname, h.Cores)
}

// crossCaveats finds the experiments' different data and hosts: runs
// holds each experiment's runs, in comparison order.
func crossCaveats(ids []int64, runs map[int64][]store.Run) Caveats {
	var cv Caveats
	data := map[string][]string{}  // "dataset, dim N" → experiments
	hosts := map[string][]string{} // host → experiments
	for _, id := range ids {
		seenData, seenHost := map[string]bool{}, map[string]bool{}
		for _, r := range runs[id] {
			d := fmt.Sprintf("%s (dim %d)", r.Dataset, r.FeatureDim)
			if r.FeatureDim == 0 {
				d = r.Dataset
			}
			if !seenData[d] {
				seenData[d] = true
				data[d] = append(data[d], fmt.Sprintf("#%d", id))
			}
			if h := hostLabel(r.Host); h != "" && !seenHost[h] {
				seenHost[h] = true
				hosts[h] = append(hosts[h], fmt.Sprintf("#%d", id))
			}
		}
	}
	say := func(m map[string][]string) string {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s in %s", k, strings.Join(m[k], ", ")))
		}
		return strings.Join(parts, "; ")
	}
	if len(data) > 1 {
		cv.MixedData = "the experiments ran on different data: " + say(data) + ". Epoch times on different datasets or feature dimensions are not points of one sweep"
	}
	if len(hosts) > 1 {
		cv.Flags = append(cv.Flags, "measured on different hosts: "+say(hosts)+"; differences between them may be the machines'")
	}
	return cv
}
