package web

import (
	"encoding/json"
	"strings"
	"testing"

	"outcore/store"
	"outcore/web/views"
)

func logsOf(lines ...string) []store.Event {
	var evs []store.Event
	for i, l := range lines {
		level, msg, _ := strings.Cut(l, "|")
		evs = append(evs, store.Event{ID: int64(i + 1), Kind: store.EventLog, Level: level, Msg: msg})
	}
	return evs
}

// TestRunFactsAgreeWithTheLog: the run page's facts say what the log says.
func TestRunFactsAgreeWithTheLog(t *testing.T) {
	done := store.Run{Status: store.StatusDone, IOBackend: "uring"}
	for _, c := range []struct {
		name string
		run  store.Run
		logs []store.Event
		fact func(store.Run, []store.Event) string
		want string
	}{
		{"evicted, flag unset", done, logsOf("info|evicted the page cache of 7 dataset files (fadvise DONTNEED)"), pageCacheFact,
			"yes: 7 dataset files (fadvise DONTNEED) evicted"},
		{"not evicted", store.Run{Status: store.StatusDone, CacheDropped: true}, logsOf("warn|dataset pages not evicted from the page cache: EPERM"), pageCacheFact,
			"no: dataset pages not evicted from the page cache: EPERM"},
		{"no log, flag", store.Run{Status: store.StatusDone, CacheDropped: true}, nil, pageCacheFact, "yes"},
		{"one backend", done, logsOf("info|storage: /d/features.bin: backend uring (auto: io_uring available), O_DIRECT, block 4096 B (statx), depth 64"), ioBackendFact,
			"uring (auto: io_uring available)"},
		{"variant asked for pread", done, logsOf(
			"info|storage: /d/features.bin: backend uring (auto: io_uring available), O_DIRECT, block 4096 B",
			"info|started: system ginex, I/O backend uring",
			"info|storage: /d/features.bin: backend pread (requested), O_DIRECT, block 4096 B, 8 workers"), ioBackendFact,
			"evaluation: uring (auto: io_uring available) on features.bin; training: pread (requested) on features.bin"},
		{"no storage lines", done, nil, ioBackendFact, "uring"},
		{"floor against a profile", done, logsOf("info|I/O floor against the storage profile /d/device-profiles/h--x.json (short mode, measured at T; sequential 900 MB/s)"),
			ioFloorFact, "against the storage profile /d/device-profiles/h--x.json (short mode, measured at T; sequential 900 MB/s)"},
		{"floor after waiting", done, logsOf("info|waited 4.2 s for the measurement of this host's storage: x",
			"info|I/O floor against the storage profile P (short mode)"), ioFloorFact, "against the storage profile P (short mode) (the run waited 4.2 s for its measurement)"},
		{"started before the profile", done, logsOf("info|no I/O floor yet: storage S on host H was not measured when this run started; ..."), ioFloorFact,
			"not yet: this host's storage was not measured when the run started; the floor is filled in from the reads its epochs kept once it is"},
		{"filled in afterwards", done, logsOf("info|no I/O floor yet: storage S on host H was not measured when this run started; ...",
			"info|I/O floor filled in for 3 epochs recorded before the storage was measured, from the storage profile P"), ioFloorFact,
			"filled in after the run (it started before this host's storage was measured): 3 epochs recorded before the storage was measured, from the storage profile P"},
		{"no floor", done, logsOf("warn|no I/O floor: measuring storage S on host H failed: O_DIRECT refused"), ioFloorFact,
			"none: measuring storage S on host H failed: O_DIRECT refused"},
		{"old run", done, nil, ioFloorFact, "none recorded"},
	} {
		if got := c.fact(c.run, c.logs); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestOOMCauseAndPeakNote(t *testing.T) {
	peakRSS, peakCG := int64(300<<20), int64(250<<20)
	prog, _ := json.Marshal(map[string]any{"type": "progress", "epoch": 1, "batch": 40, "batches": 120, "phase": "train"})
	devs, _ := json.Marshal([]string{"... is held outside the 256 MiB memory budget, as the GPU memory it occupies in the papers; the cgroup limit is 296 MiB"})
	r := store.Run{Status: store.StatusOOM, MemLimitBytes: 256 << 20, PeakRSSBytes: &peakRSS, PeakCgroupBytes: &peakCG,
		Progress: prog, Deviations: devs, EpochsDone: 1, StderrTail: "loading\nfatal error: runtime: out of memory\ngoroutine 1"}
	got := oomCause(r, logsOf("info|epoch 0 done", "warn|gnndrive: the budget cannot hold one extractor's reservation", "info|x"))
	for _, want := range []string{"Killed while training epoch 2, after batch 40 of 120", "the cgroup peaked at 250MiB of its 296MiB limit",
		"last warning: gnndrive: the budget cannot hold one extractor's reservation", "stderr: fatal error: runtime: out of memory"} {
		if !strings.Contains(got, want) {
			t.Errorf("OOM cause %q lacks %q", got, want)
		}
	}
	if oomCause(store.Run{Status: store.StatusDone}, nil) != "" {
		t.Error("a done run has an OOM cause")
	}
	note := peakNote(r)
	if !strings.Contains(note, "peak RSS (300MiB") || !strings.Contains(note, "cgroup's peak (250MiB)") {
		t.Errorf("peak note %q", note)
	}
	low := int64(100 << 20)
	if peakNote(store.Run{PeakRSSBytes: &low, PeakCgroupBytes: &peakCG}) != "" {
		t.Error("a note where RSS is below the cgroup peak")
	}
}

// TestOOMBannerShowsTheCgroupLimit: an OOM run's banner names the cgroup's
// limit (budget + the model step, from the deviation its child logged
// while it prepared, kept without a summary), not the budget.
func TestOOMBannerShowsTheCgroupLimit(t *testing.T) {
	peak := int64(90 << 20)
	devs, _ := json.Marshal([]string{"the CPU trainer's model step (46 MiB) is held outside the 64 MiB memory budget, as the GPU memory it occupies in the papers; the cgroup limit is 110 MiB"})
	r := store.Run{Status: store.StatusOOM, MemLimitBytes: 64 << 20, PeakCgroupBytes: &peak, Deviations: devs}
	if got := oomCause(r, nil); !strings.Contains(got, "the cgroup peaked at 90MiB of its 110MiB limit") {
		t.Fatalf("banner %q", got)
	}
}

// TestMemoryLimitFactNamesBothLimits: a run that held its model step
// beside its budget names both the budget and the larger limit its cgroup
// had in force (the page said "limit 146 MiB" and only a deviation below
// said 174 MiB); a run without names its budget as the limit in force.
func TestMemoryLimitFactNamesBothLimits(t *testing.T) {
	devs, _ := json.Marshal([]string{"the CPU trainer's model step (28 MiB) is held outside the 146 MiB memory budget, as the GPU memory it occupies in the papers; the cgroup limit is 174 MiB"})
	r := store.Run{MemLimitBytes: 146 << 20, LimitEnforced: true, Deviations: devs}
	if got := memoryLimitFact(r); !strings.Contains(got, "host budget 146MiB") || !strings.Contains(got, "cgroup limit in force 174MiB") {
		t.Errorf("fact %q", got)
	}
	r.Deviations = nil
	if got := memoryLimitFact(r); got != "host budget 146MiB (the cgroup limit in force)" {
		t.Errorf("fact %q", got)
	}
}

// TestRunPageShowsTheTestbed: a run's page names its testbed (DESIGN §13)
// among its facts, "this-host" for a config that names none, and the
// mapping's settings the run recorded among its deviations.
func TestRunPageShowsTheTestbed(t *testing.T) {
	devs, _ := json.Marshal([]string{"testbed gids-vldb24: modelled step time dilated × 2.5"})
	for _, c := range []struct {
		config, want string
		devs         json.RawMessage
	}{
		{`{"testbed":"gids-vldb24"}`, "gids-vldb24", devs},
		{`{}`, "this-host", nil},
	} {
		r := store.Run{ID: 7, Status: store.StatusDone, Config: json.RawMessage(c.config), Deviations: c.devs}
		v := runView(r, nil, nil)
		var html strings.Builder
		if err := views.RunFacts(v).Render(t.Context(), &html); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(html.String(), "<dt>testbed</dt><dd>"+c.want+"</dd>") {
			t.Errorf("config %s: the run's facts lack testbed %s:\n%.2000s", c.config, c.want, html.String())
		}
		if c.devs != nil {
			html.Reset()
			if err := views.RunPage(views.Page{Title: "run"}, v).Render(t.Context(), &html); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(html.String(), "testbed gids-vldb24: modelled step time dilated × 2.5") {
				t.Errorf("the run page lacks the testbed's deviation")
			}
		}
	}
}

// TestRunFactsShowProactiveReclaim: a run whose host paged out idle
// memory beside its limit says so on its page; one whose host did not
// has no such row.
func TestRunFactsShowProactiveReclaim(t *testing.T) {
	row := func(host string) (string, bool) {
		for _, kv := range runFacts(store.Run{Status: store.StatusDone, Host: json.RawMessage(host)}, nil) {
			if kv.K == "proactive reclaim" {
				return kv.V, true
			}
		}
		return "", false
	}
	v, ok := row(`{"hostname":"h","cores":2,"reclaim":"DAMON pageout (kdamond 0) of the host's memory idle ≥ 60 s, up to 128 MiB/s"}`)
	if !ok || !strings.HasPrefix(v, "DAMON pageout (kdamond 0) of the host's memory idle ≥ 60 s, up to 128 MiB/s") {
		t.Errorf("reclaim row %q (shown %v)", v, ok)
	}
	if v, ok := row(`{"hostname":"h","cores":2}`); ok {
		t.Errorf("a host without reclaim shows %q", v)
	}
}
