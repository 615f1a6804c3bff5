package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"outcore/engine/dataset"
	"outcore/engine/devprofile"
	"outcore/engine/metrics"
	"outcore/engine/train"
)

// TestTrainTestbedEpochs: under a paper's --testbed the epochs are the
// mapping's (0 in the parsed config) unless --epochs gives them.
func TestTrainTestbedEpochs(t *testing.T) {
	for _, c := range []struct {
		args   []string
		epochs int
	}{
		{[]string{"--dataset", "d", "--testbed", "ginex-vldb22"}, 0},
		{[]string{"--dataset", "d", "--testbed", "ginex-vldb22", "--epochs", "5"}, 5},
		{[]string{"--dataset", "d", "--testbed", "this-host"}, train.DefaultConfig().Epochs},
		{[]string{"--dataset", "d"}, train.DefaultConfig().Epochs},
	} {
		cfg, _, err := parseTrainArgs(c.args)
		if err != nil || cfg.Epochs != c.epochs {
			t.Errorf("%v: epochs %d (%v), want %d", c.args, cfg.Epochs, err, c.epochs)
		}
	}
	code, _, stderr := runCLI("train", "--dataset", "d", "--testbed", "nowhere")
	if code == 0 || !strings.Contains(stderr, `unknown testbed "nowhere"`) || !strings.Contains(stderr, "gnndrive-icpp24") {
		t.Errorf("unknown testbed: exit %d, %s", code, stderr)
	}
}

// TestTrainUnderTestbed runs `outcore train --testbed` on tiny: without
// --mem-limit the mapping's host memory is the run's limit (here too small
// for ginex to start: a usage error that says so and names the suggested
// --mem-limit); with --mem-limit the run keeps its own, and its records
// name the testbed and the mapped settings.
func TestTrainUnderTestbed(t *testing.T) {
	dir, err := os.MkdirTemp(".", ".testbed-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	gen, _ := dataset.Preset("tiny")
	ds, err := dataset.Generate(context.Background(), dataset.DatasetsDir(dir), "tiny", gen, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A storage profile of this file system, so that no measurement runs.
	abs, _ := filepath.Abs(ds.Dir)
	k, err := devprofile.KeyOf(abs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := devprofile.Save(dir, &metrics.DeviceProfile{Hostname: k.Host, Storage: k.Storage, File: "probe", FileBytes: 1 << 28, MeasuredAt: "2026-01-01T00:00:00Z", Mode: devprofile.ModeFull,
		Random: []metrics.IOPSPoint{{Bytes: 4096, Depth: 64, IOPS: 100000}}, SeqBytesPerS: 1e9, SeqRequestBytes: 1 << 20, SeqDepth: 8}); err != nil {
		t.Fatal(err)
	}
	cfg := train.DefaultConfig()
	cfg.System, cfg.Testbed, cfg.Batch = "ginex", "ginex-vldb22", 100
	s, err := train.MapTestbed(cfg, ds.Meta, dir, ds.Dir)
	if err != nil {
		t.Fatal(err)
	}
	host, _, _ := s.For("ginex")
	args := []string{"train", "--data-dir", dir, "--dataset", "tiny", "--system", "ginex", "--testbed", "ginex-vldb22", "--batch", "100", "--train-max-nodes", "200", "--allow-buffered"}
	code, _, stderr := runCLI(args...)
	for _, w := range []string{fmt.Sprintf("suggested --mem-limit %d", host), fmt.Sprintf("no --mem-limit given: the run takes the mapping's, --mem-limit %d", host), "give --mem-limit to run under another limit", "I/O depth 16 (ginex, pyg+)"} {
		if code == 0 || !strings.Contains(stderr, w) {
			t.Errorf("without --mem-limit: exit %d, stderr lacks %q:\n%s", code, w, stderr)
		}
	}
	code, out, stderr := runCLI(append(args, "--mem-limit", "1GiB", "--cgroup", "none")...)
	if code != 0 {
		t.Fatalf("with --mem-limit: exit %d:\n%s", code, stderr)
	}
	var start metrics.StartRecord
	var sum metrics.SummaryRecord
	epochs := 0
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var head struct{ Type string }
		json.Unmarshal(sc.Bytes(), &head)
		switch head.Type {
		case metrics.TypeStart:
			json.Unmarshal(sc.Bytes(), &start)
		case metrics.TypeSummary:
			json.Unmarshal(sc.Bytes(), &sum)
		case metrics.TypeEpoch:
			epochs++
		}
	}
	var got train.Config
	json.Unmarshal(start.Config, &got)
	if start.Testbed != "ginex-vldb22" || sum.Testbed != "ginex-vldb22" || got.Compute != "model:"+s.AccelProfile || got.Options[train.IODepthOption] != "16" || epochs != s.Epochs || got.MemLimit != "1GiB" {
		t.Errorf("records: testbed %q/%q, compute %q, options %v, %d epochs (mapping %d), mem_limit %q", start.Testbed, sum.Testbed, got.Compute, got.Options, epochs, s.Epochs, got.MemLimit)
	}
	if !strings.Contains(strings.Join(sum.Deviations, "\n"), `the run's own mem_limit "1GiB"`) {
		t.Errorf("no deviation says the run kept its own --mem-limit: %q", sum.Deviations)
	}
}
