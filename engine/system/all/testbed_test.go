package all

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"outcore/engine/dataset"
	"outcore/engine/devprofile"
	"outcore/engine/metrics"
	"outcore/engine/system/systest"
	"outcore/engine/testbed"
	"outcore/engine/train"
	"outcore/engine/vocab"
)

// TestEveryVariantRunsUnderEveryTestbed runs every variant (and the
// reference) for a few batches on `tiny` under each paper's testbed, with
// the epochs, compute, device budget, step dilation and I/O depth left to
// the mapping (DESIGN §13), and checks that the records carry what the
// mapping gives: the testbed in the start and summary records, compute
// model:<the paper GPU's profile>, the mapping's epochs (each reported, the
// first cold), the step dilation the mapping derives from this host's
// storage profile, io_depth for ginex and pyg+, the device budget, and
// every line of Settings.Deviations among the start record's and the
// summary's deviations.
func TestEveryVariantRunsUnderEveryTestbed(t *testing.T) {
	// The data directory as a run resolves it (absolute): the deviations
	// name the storage profile by its path under it.
	dataDir := dataset.ResolveDataDir(systest.DiskDir(t))
	gen, err := dataset.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	ds, err := dataset.Generate(context.Background(), dataset.DatasetsDir(dataDir), "tiny", gen, nil)
	if err != nil {
		t.Fatal(err)
	}
	// This host's storage as a profile of the file system the dataset is
	// on: the mapping's dilation is the paper SSD's figure over these.
	abs, err := filepath.Abs(ds.Dir)
	if err != nil {
		t.Fatal(err)
	}
	key, err := devprofile.KeyOf(abs)
	if err != nil {
		t.Fatal(err)
	}
	prof := &metrics.DeviceProfile{Hostname: key.Host, Storage: key.Storage, File: "probe", FileBytes: 1 << 28, MeasuredAt: "2026-01-01T00:00:00Z",
		Random: []metrics.IOPSPoint{{Bytes: 4096, Depth: 64, IOPS: 200000}}, SeqBytesPerS: 2e9, SeqRequestBytes: 1 << 20, SeqDepth: 8}
	path, err := devprofile.Save(dataDir, prof)
	if err != nil {
		t.Fatal(err)
	}
	st := train.TestbedStorage(prof, devprofile.Describe(prof, path))

	variants := train.Names()
	if !slices.Contains(variants, train.ReferenceName) {
		variants = append([]string{train.ReferenceName}, variants...)
	}
	for _, name := range testbed.Names() {
		if name == testbed.ThisHost {
			continue
		}
		t.Run(name, func(t *testing.T) {
			for _, sys := range variants {
				t.Run(sys, func(t *testing.T) {
					cfg := train.DefaultConfig()
					cfg.Dataset, cfg.DataDir, cfg.System, cfg.Testbed = "tiny", dataDir, sys, name
					cfg.Hidden, cfg.Batch, cfg.Fanout, cfg.LR = 16, 100, []int{5, 5}, 0.01
					cfg.Epochs = 0 // the mapping's
					cfg.TrainMaxNodes = 200
					cfg.AllowBuffered = true
					tb, err := testbed.Load(name)
					if err != nil {
						t.Fatal(err)
					}
					want, err := testbed.Map(tb, testbed.DatasetShape{Name: "tiny", Nodes: ds.Meta.Nodes, FeatureDim: ds.Meta.FeatureDim},
						testbed.BatchShape{Batch: 100, Fanout: []int{5, 5}}, st)
					if err != nil {
						t.Fatal(err)
					}
					var out bytes.Buffer
					sum, err := train.Run(context.Background(), cfg, &out, nil)
					r, perr := systest.Parse(out.Bytes())
					if perr != nil {
						t.Fatal(perr)
					}
					if err != nil {
						t.Fatalf("%v\nlogs:\n%s", err, strings.Join(r.Logs, "\n"))
					}
					checkTestbedRun(t, sys, name, want, r, sum)
				})
			}
		})
	}
}

func checkTestbedRun(t *testing.T, sys, name string, want testbed.Settings, r systest.Result, sum metrics.SummaryRecord) {
	t.Helper()
	if r.Start.Testbed != name || sum.Testbed != name {
		t.Errorf("testbed %q in the start record, %q in the summary; want %q", r.Start.Testbed, sum.Testbed, name)
	}
	var got vocab.Config
	if err := json.Unmarshal(r.Start.Config, &got); err != nil {
		t.Fatal(err)
	}
	if w := "model:" + want.AccelProfile; got.Compute != w || r.Start.Devices["train"] != w {
		t.Errorf("compute %q (train device %q), want %q", got.Compute, r.Start.Devices["train"], w)
	}
	if want.Epochs < testbed.MinEpochs || got.Epochs != want.Epochs || len(r.Epochs) != want.Epochs || sum.Epochs != want.Epochs {
		t.Errorf("epochs: config %d, %d epoch records, summary %d; the mapping's %d (at least %d)", got.Epochs, len(r.Epochs), sum.Epochs, want.Epochs, testbed.MinEpochs)
	}
	for i, e := range r.Epochs {
		if e.Warmup != (i < testbed.ColdEpochs) {
			t.Errorf("epoch %d: warmup %v, the first %d cold", i, e.Warmup, testbed.ColdEpochs)
		}
	}
	if got.StepDilation != want.Dilation {
		t.Errorf("step_dilation %v, the mapping's %v (%s)", got.StepDilation, want.Dilation, want.DilationRule)
	}
	if want.Dilation > 0 && !systest.HasDeviation(sum.Deviations, "dilated ×") {
		t.Errorf("no deviation says the step is dilated: %q", sum.Deviations)
	}
	_, device, _ := want.For(sys)
	if device == 0 { // not derivable in the system's unit: the run's own
		if got.DeviceMem != "" || !systest.HasDeviation(sum.Deviations, "device budget not derivable") {
			t.Errorf("device_mem %q without a mapped budget; deviations %q", got.DeviceMem, sum.Deviations)
		}
	} else if got.DeviceMem != strconv.FormatInt(device, 10) || got.DeviceMemBytes != 0 && got.DeviceMemBytes != device {
		t.Errorf("device_mem %q (%d bytes), the mapping's %d bytes", got.DeviceMem, got.DeviceMemBytes, device)
	}
	if sum.Memory != nil && device > 0 && sum.Memory.DeviceBudgetBytes != device {
		t.Errorf("device budget held %d bytes, the mapping's %d", sum.Memory.DeviceBudgetBytes, device)
	}
	depth := got.Options[train.IODepthOption]
	switch {
	case testbed.ThreadPerRequest(sys) && want.IODepth > 0:
		if depth != strconv.Itoa(want.IODepth) || !systest.HasDeviation(r.Start.Deviations, "io_depth="+depth+":") {
			t.Errorf("io_depth %q, the mapping's %d; deviations %q", depth, want.IODepth, r.Start.Deviations)
		}
	case depth != "":
		t.Errorf("io_depth %q set for %s (not thread-per-request or no depth derivable)", depth, sys)
	}
	for _, d := range want.Deviations(sys) {
		if !slices.Contains(r.Start.Deviations, d) || !slices.Contains(sum.Deviations, d) {
			t.Errorf("deviation %q missing from the start record or the summary", d)
		}
	}
}
