package web

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"outcore/engine/metrics"
	"outcore/engine/vocab"
	"outcore/internal/units"
	"outcore/report"
	"outcore/store"
)

// The run page states what the run's log knows, so that its facts never
// contradict the log below them: how the page cache was left before the
// run, which I/O backend each reader used, why a peak RSS can exceed the
// cgroup's peak, and what an out-of-memory run was doing when it was
// killed. Pure functions of the run and its log events.

// pageCacheFact says how the dataset's pages stood in the page cache when
// the run started, from the runner's log lines (experiments/runner_linux.go).
func pageCacheFact(r store.Run, logs []store.Event) string {
	var parts []string
	for _, ev := range logs {
		switch m := ev.Msg; {
		case strings.HasPrefix(m, "evicted the page cache of "):
			parts = append(parts, "yes: "+strings.TrimPrefix(m, "evicted the page cache of ")+" evicted")
		case m == "page cache dropped before the run":
			parts = append(parts, "yes: the whole page cache dropped (drop_caches)")
		case strings.HasPrefix(m, "dataset pages not evicted"), strings.HasPrefix(m, "page cache not dropped"):
			parts = append(parts, "no: "+m)
		}
	}
	if len(parts) > 0 {
		return strings.Join(parts, "; ")
	}
	switch {
	case r.CacheDropped:
		return "yes"
	case r.Status == store.StatusQueued:
		return "–"
	}
	return "no"
}

// storageLineRE reads engine/storage's line for each file it opens:
// "storage: PATH: backend NAME (WHY), ...".
var storageLineRE = regexp.MustCompile(`^storage: (.+?): backend (\S+) \(([^)]*)\)`)

// ioBackendFact names the I/O backend of each reader the run opened, from
// engine/storage's log lines: the evaluator's reader opens first (its
// backend is the start record's io_backend), the variant's after it.
func ioBackendFact(r store.Run, logs []store.Event) string {
	type use struct{ backend, why, file string }
	var uses []use
	for _, ev := range logs {
		m := storageLineRE.FindStringSubmatch(ev.Msg)
		if m == nil {
			continue
		}
		u := use{backend: m[2], why: m[3], file: filepath.Base(m[1])}
		dup := false
		for _, o := range uses {
			dup = dup || o == u
		}
		if !dup {
			uses = append(uses, u)
		}
	}
	if len(uses) == 0 {
		return orDash(r.IOBackend)
	}
	same := true
	for _, u := range uses[1:] {
		same = same && u.backend == uses[0].backend && u.why == uses[0].why
	}
	if same {
		return fmt.Sprintf("%s (%s)", uses[0].backend, uses[0].why)
	}
	var parts []string
	for i, u := range uses {
		role := "training"
		if i == 0 && u.backend == r.IOBackend {
			role = "evaluation"
		}
		parts = append(parts, fmt.Sprintf("%s: %s (%s) on %s", role, u.backend, u.why, u.file))
	}
	return strings.Join(parts, "; ")
}

// peakNote explains a peak RSS above the cgroup's peak, and a cgroup peak
// above the budget where the model step was held outside it ("" when
// neither).
func peakNote(r store.Run) string {
	var notes []string
	if r.PeakRSSBytes != nil && r.PeakCgroupBytes != nil && *r.PeakCgroupBytes > 0 && *r.PeakRSSBytes > *r.PeakCgroupBytes {
		notes = append(notes, fmt.Sprintf("The peak RSS (%s, the process's high-water mark) is above the cgroup's peak (%s): RSS counts every page mapped into the run, "+
			"file pages of the memory-mapped dataset included, while the cgroup counts only pages charged to it; pages already in the page cache when the run's group "+
			"was made (read by an earlier run or process) stay charged to the group that read them.",
			units.Bytes(*r.PeakRSSBytes), units.Bytes(*r.PeakCgroupBytes)))
	}
	if cg := r.CgroupLimit(); cg > r.MemLimitBytes && r.MemLimitBytes > 0 && r.PeakCgroupBytes != nil && *r.PeakCgroupBytes > r.MemLimitBytes {
		notes = append(notes, fmt.Sprintf("The cgroup's peak is above the %s budget because its limit was %s: the model step is held outside the budget (see the deviations).",
			report.MemLabel(r.MemLimitBytes), report.MemLabel(cg)))
	}
	return strings.Join(notes, " ")
}

// oomCause says what an out-of-memory run was doing when it was killed:
// its last progress (phase, epoch, batch), the cgroup's peak against the
// limit, the last warning its log has, and the memory error its standard
// error names.
func oomCause(r store.Run, logs []store.Event) string {
	if r.Status != store.StatusOOM {
		return ""
	}
	var parts []string
	var pr metrics.ProgressRecord
	switch {
	case len(r.Progress) > 0 && json.Unmarshal(r.Progress, &pr) == nil && pr.Phase != "" && pr.Phase != "train":
		parts = append(parts, fmt.Sprintf("killed during %s (epoch %d, %d of %d)", pr.Phase, pr.Epoch+1, pr.Batch, pr.Batches))
	case len(r.Progress) > 0 && json.Unmarshal(r.Progress, &pr) == nil && pr.Batches > 0:
		parts = append(parts, fmt.Sprintf("killed while training epoch %d, after batch %d of %d", pr.Epoch+1, pr.Batch, pr.Batches))
	case r.EpochsDone == 0:
		parts = append(parts, "killed before its first epoch finished (while preparing: profiling, building caches)")
	default:
		parts = append(parts, fmt.Sprintf("killed after %d epochs", r.EpochsDone))
	}
	if r.PeakCgroupBytes != nil && r.MemLimitBytes > 0 {
		lim := r.MemLimitBytes
		if cg := r.CgroupLimit(); cg > lim {
			lim = cg
		}
		parts = append(parts, fmt.Sprintf("the cgroup peaked at %s of its %s limit", units.Bytes(*r.PeakCgroupBytes), units.Bytes(lim)))
	}
	for i := len(logs) - 1; i >= 0; i-- {
		ev := logs[i]
		if ev.Kind == store.EventLog && (ev.Level == "warn" || ev.Level == "error") && !strings.HasPrefix(ev.Msg, "memory limit") {
			parts = append(parts, "last warning: "+ev.Msg)
			break
		}
	}
	for _, line := range strings.Split(r.StderrTail, "\n") {
		l := strings.ToLower(line)
		if strings.Contains(l, "out of memory") || strings.Contains(l, "cannot allocate memory") || strings.Contains(l, "mmap: ") {
			parts = append(parts, "stderr: "+strings.TrimSpace(line))
			break
		}
	}
	s := strings.Join(parts, "; ") + "."
	return strings.ToUpper(s[:1]) + s[1:]
}

// ioFloorFact says what the run's I/O floor (io_floor_s, DESIGN §11) was
// measured against, from the run's log: the storage profile the child
// named, a floor filled in after the run (experiments.FillIOFloors), or
// why there is none.
func ioFloorFact(r store.Run, logs []store.Event) string {
	var against, missing, filled, waited string
	for _, ev := range logs {
		switch m := ev.Msg; {
		case strings.HasPrefix(m, "I/O floor against "):
			against = strings.TrimPrefix(m, "I/O floor against ")
		case strings.HasPrefix(m, vocab.NoFloorYet):
			missing = "not yet: this host's storage was not measured when the run started; the floor is filled in from the reads its epochs kept once it is"
		case strings.HasPrefix(m, "no I/O floor"):
			missing = "none: " + strings.TrimPrefix(strings.TrimPrefix(m, "no I/O floor: "), "no I/O floor yet: ")
		case strings.HasPrefix(m, vocab.FloorFilledIn):
			filled = "filled in after the run (it started before this host's storage was measured): " + strings.TrimPrefix(m, vocab.FloorFilledIn+" ")
		case strings.HasPrefix(m, "measured this host's storage"):
			waited = " (measured before this run started)"
		case strings.HasPrefix(m, "waited "):
			if i := strings.Index(m, " s for the measurement"); i > 0 {
				waited = " (the run waited " + strings.TrimPrefix(m[:i], "waited ") + " s for its measurement)"
			}
		}
	}
	switch {
	case filled != "":
		return filled
	case against != "":
		return "against " + against + waited
	case missing != "":
		return missing
	case r.Status == store.StatusQueued:
		return "–"
	}
	return "none recorded"
}
