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
	if ReadAmplification(8192, 4096) != 2 || ReadAmplification(1, 0) != 0 {
		t.Fatal("read amplification")
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
