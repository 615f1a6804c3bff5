package metrics

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"outcore/internal/osutil"
)

func TestEmitterConcurrentLinesStayWhole(t *testing.T) {
	var buf bytes.Buffer
	e := NewEmitter(&buf)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				if err := e.Emit(ProgressRecord{Type: TypeProgress, Epoch: g, Batch: i, Batches: 200}); err != nil {
					t.Error(err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	sc := bufio.NewScanner(&buf)
	n := 0
	for sc.Scan() {
		var r ProgressRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %d not one JSON record: %v: %q", n, err, sc.Text())
		}
		if r.Type != TypeProgress {
			t.Fatalf("line %d type %q", n, r.Type)
		}
		n++
	}
	if n != 1600 {
		t.Fatalf("got %d lines, want 1600", n)
	}
}

func TestEpochStatsFill(t *testing.T) {
	s := NewEpochStats()
	s.BatchStarted()
	s.Add(StageSample, 2*time.Second)
	s.Add(StageSample, time.Second)
	s.Add(StageForward, 500*time.Millisecond)
	s.AddTier(TierCPU, 10, 4)
	s.AddTier(TierCPU, 10, 6)
	s.AddBytesNeeded(4096)
	time.Sleep(5 * time.Millisecond)
	s.BatchDone(1.0, 3, 10)
	s.BatchDone(2.0, 10, 10)
	var r EpochRecord
	s.Fill(&r)
	if r.SampleS != 3 || r.Stages[StageForward] != 0.5 {
		t.Fatalf("stages: sample_s=%v stages=%v", r.SampleS, r.Stages)
	}
	if r.Tiers[TierCPU] != (TierCount{Lookups: 20, Hits: 10}) {
		t.Fatalf("tiers %v", r.Tiers)
	}
	if r.Batches != 2 || r.BytesNeeded != 4096 || r.TrainLoss != 1.5 || r.TrainAcc != 0.65 {
		t.Fatalf("record %+v", r)
	}
	if r.EpochS < 0.004 {
		t.Fatalf("epoch_s %v, want >= 5ms", r.EpochS)
	}
}

func TestReadAmplificationFormula(t *testing.T) {
	for _, c := range []struct {
		bytes, rows, rowBytes int64
		want                  float64
	}{
		{8192, 1, 4096, 2},    // one row of 4 KiB cost two blocks
		{4096, 8, 512, 1},     // eight 512 B rows packed in one block
		{4096 * 8, 8, 512, 8}, // eight scattered 512 B rows, a block each
		{4096, 16, 512, 0.5},  // rows sharing blocks read once
		{1, 0, 512, 0},        // no row from the device: undefined, 0
		{0, 0, 0, 0},          // nothing
		{1 << 40, 1, 1 << 2, 1 << 38},
	} {
		if got := ReadAmplification(c.bytes, c.rows, c.rowBytes); got != c.want {
			t.Errorf("ReadAmplification(%d, %d, %d) = %v, want %v", c.bytes, c.rows, c.rowBytes, got, c.want)
		}
	}
	if BytesReadPerNeeded(8192, 4096) != 2 || BytesReadPerNeeded(1, 0) != 0 {
		t.Fatal("bytes read per byte needed")
	}
}

func TestLookupAccountsEveryRowOnce(t *testing.T) {
	for _, c := range []struct {
		name          string
		rows, shared  int64
		tiers         []TierRows
		want          map[string]TierCount
		wantShared    int64
		wantUnaccount int64
	}{
		{name: "all from the device", rows: 10,
			want: map[string]TierCount{TierDevice: {10, 10}}},
		{name: "page cache and device", rows: 10, tiers: []TierRows{{TierCPU, 7}},
			want: map[string]TierCount{TierCPU: {10, 7}, TierDevice: {3, 3}}},
		{name: "buffer, shared in flight, device", rows: 10, shared: 2, tiers: []TierRows{{TierCPU, 5}},
			want: map[string]TierCount{TierCPU: {10, 5}, TierDevice: {3, 3}}, wantShared: 2},
		{name: "hierarchy gpu cpu disk cache packed", rows: 100,
			tiers: []TierRows{{TierGPU, 40}, {TierCPU, 30}, {TierDiskCache, 20}, {TierPacked, 10}},
			want:  map[string]TierCount{TierGPU: {100, 40}, TierCPU: {60, 30}, TierDiskCache: {30, 20}, TierPacked: {10, 10}}},
		{name: "over-counted", rows: 5, shared: 2, tiers: []TierRows{{TierCPU, 5}},
			want: map[string]TierCount{TierCPU: {5, 5}}, wantShared: 2, wantUnaccount: 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := NewEpochStats()
			s.Lookup(c.rows, 512, c.shared, c.tiers...)
			var r EpochRecord
			s.Fill(&r)
			for k, v := range c.want {
				if r.Tiers[k] != v {
					t.Errorf("tier %s = %+v, want %+v", k, r.Tiers[k], v)
				}
			}
			for k, v := range r.Tiers {
				if _, ok := c.want[k]; !ok && v != (TierCount{}) {
					t.Errorf("unexpected tier %s = %+v", k, v)
				}
			}
			if r.RowsSharedInFlight != c.wantShared || r.Counters["rows_unaccounted"] != c.wantUnaccount {
				t.Errorf("shared %d unaccounted %d, want %d %d", r.RowsSharedInFlight, r.Counters["rows_unaccounted"], c.wantShared, c.wantUnaccount)
			}
			if r.BytesNeeded != c.rows*512 {
				t.Errorf("bytes_needed %d, want %d", r.BytesNeeded, c.rows*512)
			}
		})
	}
}

func TestWorkerBusyAndWait(t *testing.T) {
	s := NewEpochStats()
	t0 := time.Now()
	w := s.StartWorker(WorkSample)
	// Burn 40 ms of the thread's CPU time (StartWorker locked the
	// goroutine to it), then block for 60 ms. The spin is counted in CPU
	// time, not wall time: on a loaded host 60 ms of wall time gave the
	// thread less than 5 ms of CPU (load 35 on 2 cores), and the time it
	// waited for a core is wait.
	cpu0 := osutil.ThreadCPU()
	x := 0
	for osutil.ThreadCPU()-cpu0 < 40*time.Millisecond {
		x++
	}
	time.Sleep(60 * time.Millisecond)
	w.Stop()
	wall := time.Since(t0).Seconds()
	s.AddWorkerTime(WorkExtract, 2*time.Second, time.Second)
	var r EpochRecord
	s.Fill(&r)
	// Busy is CPU time: the spin (and the few microseconds around the
	// sleep), not the sleep; the spin's waits for a core on a loaded
	// machine count as wait.
	if r.SampleBusyS < 0.04 || r.SampleBusyS > 0.05 {
		t.Errorf("sample_busy_s %v, want the spin's 0.04 s of CPU (x=%d)", r.SampleBusyS, x)
	}
	if r.SampleWaitS < 0.059 {
		t.Errorf("sample_wait_s %v, want >= the 0.06 s sleep", r.SampleWaitS)
	}
	if tot := r.SampleBusyS + r.SampleWaitS; tot < 0.1 || tot > wall {
		t.Errorf("busy+wait %v, want at least the worker's 0.04 s of CPU and 0.06 s asleep, at most its %v s of wall time", tot, wall)
	}
	if r.ExtractBusyS != 2 || r.ExtractWaitS != 1 {
		t.Errorf("extract busy/wait %v/%v", r.ExtractBusyS, r.ExtractWaitS)
	}
}

func TestReadAccountByKind(t *testing.T) {
	a := NewReadAccount(nil)
	for path, want := range map[string]string{
		"/d/datasets/x/features.bin": FileFeatures, "/d/datasets/x/indices.bin": FileTopology,
		"indptr.bin": FileTopology, "/tmp/ginex-run/e0_sb0/ids_0.bin": FileOther,
	} {
		if got := a.KindOf(path); got != want {
			t.Errorf("KindOf(%s) = %s, want %s", path, got, want)
		}
	}
	a.Add(FileFeatures, 4096, 3)
	t0 := a.Totals()
	a.Add(FileFeatures, 8192, 5)
	a.Add(FileTopology, 100, 0)
	a.Add("unknown", 7, 0)
	d := a.Totals().Sub(t0)
	if d != (ReadTotals{FeatureBytes: 8192, FeatureRows: 5, TopologyBytes: 100, OtherBytes: 7}) {
		t.Fatalf("difference %+v", d)
	}
	var none *ReadAccount
	none.Add(FileFeatures, 1, 1)
	if none.Totals() != (ReadTotals{}) || none.KindOf("features.bin") != FileOther {
		t.Fatal("nil account")
	}
}

// TestCollectHost: the record's host facts come from internal/osutil's
// collector, GPU "none" until the caller knows better.
func TestCollectHost(t *testing.T) {
	h := CollectHost(t.TempDir())
	if h.GPU != "none" || h.Cores <= 0 || h.GoVersion == "" || (runtime.GOOS == "linux" && (h.Kernel == "" || h.MemBytes <= 0)) {
		t.Fatalf("host facts %+v", h)
	}
}

type fakeGPU struct{}

func (fakeGPU) Sample() (float64, int64, bool) { return 42, 1 << 20, true }

// fakePCIeGPU also reads PCIe throughput.
type fakePCIeGPU struct{ fakeGPU }

func (fakePCIeGPU) SamplePCIe() (float64, float64, bool) { return 3, 5000, true }

// TestResourceSamplerPCIe: a GPU sampler that reads PCIe throughput puts
// it in the sample; one that does not leaves the fields out.
func TestResourceSamplerPCIe(t *testing.T) {
	r := NewResourceSampler(time.Now())
	r.GPU = fakePCIeGPU{}
	s := r.Sample()
	if s.GPUPCIeTxMBps == nil || *s.GPUPCIeTxMBps != 3 || s.GPUPCIeRxMBps == nil || *s.GPUPCIeRxMBps != 5000 {
		t.Fatalf("pcie fields %+v", s)
	}
	r.GPU = fakeGPU{}
	if s := r.Sample(); s.GPUPCIeTxMBps != nil || s.GPUPCIeRxMBps != nil {
		t.Fatalf("no PCIe sampler, but pcie fields %+v", s)
	}
}

func TestResourceSamplerDiskReads(t *testing.T) {
	// Write a file, drop it from the page cache with O_DIRECT reads, and see
	// that the sampler reports disk reads or at least valid numbers.
	r := NewResourceSampler(time.Now())
	r.GPU = fakeGPU{}
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	s := r.Sample()
	if s.Type != TypeSample || s.RSSBytes <= 0 || s.CPUPercent < 0 || s.IOWaitPercent < 0 || s.IOWaitPercent > 100 {
		t.Fatalf("sample %+v", s)
	}
	if s.GPUUtil == nil || *s.GPUUtil != 42 || *s.GPUMemBytes != 1<<20 {
		t.Fatalf("gpu fields %+v", s)
	}
	if r.CgroupFile() != "" && s.CgroupBytes <= 0 {
		t.Fatalf("cgroup file %s but usage %d", r.CgroupFile(), s.CgroupBytes)
	}
	if rss, _ := r.Peaks(); rss != s.RSSBytes {
		t.Fatalf("peak rss %d != %d", rss, s.RSSBytes)
	}
}
