package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"outcore/engine/dataset"
	"outcore/engine/devprofile"

	"outcore/engine/metrics"
)

// TestBenchDeviceThenIOFloor measures a data directory's storage briefly
// (real file, io_uring, O_DIRECT; fio too when installed), then trains on
// a dataset there: every epoch record carries io_floor_s and
// io_efficiency = io_floor_s / epoch_s. Timings here are not results (a
// loaded test machine); the test checks the plumbing and the formula.
func TestBenchDeviceThenIOFloor(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := runCLI("data", "gen", "--preset", "tiny", "--quiet", "--data-dir", dir); code != 0 {
		t.Fatalf("data gen: %s", stderr)
	}
	code, out, stderr := runCLI("bench", "device", "--data-dir", dir, "--size", "8MiB", "--seconds", "0.05",
		"--depths", "1,4", "--sizes", "512,4096", "--seq-bytes", "65536", "--seq-depth", "2", "--fio-pairs", "2",
		"--max-load", "0") // the test machine may be busy: the plumbing is under test, not the numbers
	if code != 0 {
		if strings.Contains(stderr, "O_DIRECT") {
			t.Skipf("the temp dir refuses O_DIRECT: %s", stderr)
		}
		t.Fatalf("bench device: %s", stderr)
	}
	k, err := devprofile.KeyOf(filepath.Join(dataset.DatasetsDir(dir), "tiny"))
	if err != nil {
		t.Fatal(err)
	}
	p, path, err := devprofile.Load(dir, k)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"randread bytes=512 depth=1 iops=", "randread bytes=4096 depth=4", "read bytes=65536 depth=2 mbps=",
		"profile " + path, "whose dataset is on this file system (" + p.FSType + ", " + k.Storage + ") use it"} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	if len(p.Random) != 4 || p.Hostname == "" || p.Device == 0 || p.FileBytes != 8<<20 || p.Mode != devprofile.ModeFull || p.Storage != k.Storage {
		t.Errorf("profile %+v", p)
	}
	// three rounds by default, each point their median
	if p.Rounds != 3 || len(p.Random[0].IOPSRounds) != 3 || p.Random[0].IOPS != p.Random[0].IOPSRounds[1] ||
		!strings.Contains(out, " rounds=") || !strings.Contains(out, " rounds_mbps=") {
		t.Errorf("rounds %d, first point %+v, output:\n%s", p.Rounds, p.Random[0], out)
	}
	if _, err := exec.LookPath("fio"); err == nil {
		if len(p.Fio) != 3 || !(p.Fio[0].Fio > 0) {
			t.Errorf("fio installed but checks %+v", p.Fio)
		}
		for _, ch := range p.Fio {
			if ch.Pairs != 2 || len(ch.PairRatios) != 2 || ch.Ratio != median(ch.PairRatios) || !strings.Contains(out, "median of 2 back-to-back pairs") {
				t.Errorf("check %+v: want 2 back-to-back pairs and their median ratio, output:\n%s", ch, out)
			}
		}
	}
	code, out, stderr = runCLI("train", "--data-dir", dir, "--dataset", "tiny", "--epochs", "2", "--batch", "256", "--allow-buffered")
	if code != 0 {
		t.Fatalf("train: %s", stderr)
	}
	epochs := 0
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e metrics.EpochRecord
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Type != metrics.TypeEpoch {
			continue
		}
		epochs++
		if e.IOFloorS == nil || e.IOEfficiency == nil || *e.IOFloorS < 0 {
			t.Fatalf("epoch %d without an I/O floor: %s", e.Epoch, sc.Text())
		}
		if e.EpochS > 0 && math.Abs(*e.IOEfficiency-*e.IOFloorS/e.EpochS) > 1e-9 {
			t.Errorf("io_efficiency %v, io_floor_s / epoch_s = %v", *e.IOEfficiency, *e.IOFloorS/e.EpochS)
		}
	}
	if epochs != 2 || !strings.Contains(out, "I/O floor against the storage profile "+path+" (full mode") {
		t.Errorf("%d epochs; log without the floor's source:\n%s", epochs, out)
	}
}

// bench device never rewrites an existing file it is pointed at (a
// dataset's features, say) whose size is not --size: it refuses, naming
// the sizes, and the file is as it was.
func TestBenchDeviceNeverRewritesANamedFile(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := runCLI("data", "gen", "--preset", "tiny", "--quiet", "--data-dir", dir); code != 0 {
		t.Fatalf("data gen: %s", stderr)
	}
	feats := filepath.Join(dataset.DatasetsDir(dir), "tiny", "features.bin")
	before, err := os.ReadFile(feats)
	if err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI("bench", "device", "--data-dir", dir, "--file", feats, "--size", "8MiB", "--seconds", "0.05", "--depths", "1", "--sizes", "512", "--fio", "off", "--max-load", "0")
	if code != 2 || !strings.Contains(stderr, "never rewritten") || !strings.Contains(stderr, fmt.Sprint(len(before))) {
		t.Fatalf("exit %d, stderr %q: want a refusal naming the file's size", code, stderr)
	}
	after, err := os.ReadFile(feats)
	if err != nil || !bytes.Equal(before, after) {
		t.Fatalf("the dataset's features changed (%d bytes, was %d): %v", len(after), len(before), err)
	}
}

// bench device measures only a quiet machine: above --max-load before the
// measurement it measures nothing and writes nothing; when the load rises
// above it during the measurement the profile is not saved, so no later
// run's I/O floor is judged against a busy disk; a bad --max-load is a
// usage error.
func TestBenchDeviceOnlyOnAQuietMachine(t *testing.T) {
	dir := t.TempDir()
	cfg := func(loads ...float64) benchDeviceConfig {
		i := 0
		return benchDeviceConfig{dataDir: dir, size: "8MiB", seconds: 0.05, depths: "1", sizes: "512",
			seqBytes: 65536, seqDepth: 1, fio: "off", pairs: 1, maxLoad: 1.5,
			load: func() (float64, error) {
				l := loads[min(i, len(loads)-1)]
				i++
				return l, nil
			}}
	}
	profiles := func() []string {
		m, _ := filepath.Glob(filepath.Join(dir, devprofile.DirName, "*.json"))
		return m
	}

	var out bytes.Buffer
	err := benchDevice(context.Background(), cfg(3), &out)
	if err == nil || !strings.Contains(err.Error(), "load average is 3.00 before the measurement, above --max-load 1.5") {
		t.Fatalf("busy before: %v", err)
	}
	if _, serr := os.Stat(filepath.Join(dir, "bench-device.bin")); serr == nil || len(profiles()) != 0 {
		t.Fatalf("a refused measurement wrote the probe file or a profile: %v", profiles())
	}

	out.Reset()
	err = benchDevice(context.Background(), cfg(0.5, 4), &out)
	if err != nil && strings.Contains(err.Error(), "O_DIRECT") {
		t.Skipf("the temp dir refuses O_DIRECT: %v", err)
	}
	if err == nil || !strings.Contains(err.Error(), "4.00 at the measurement's end") || !strings.Contains(err.Error(), "the profile was not saved") {
		t.Fatalf("busy at the end: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "randread bytes=512 depth=1") || len(profiles()) != 0 {
		t.Fatalf("want a measurement and no profile; profiles %v, output:\n%s", profiles(), out.String())
	}

	out.Reset()
	if err := benchDevice(context.Background(), cfg(0.5, 1.2), &out); err != nil {
		t.Fatalf("quiet: %v", err)
	}
	if len(profiles()) != 1 || !strings.Contains(out.String(), "→ 1.20 on") {
		t.Fatalf("quiet: profiles %v, output:\n%s", profiles(), out.String())
	}

	for _, bad := range []string{"-1", "NaN", "+Inf", "x"} {
		if code, _, stderr := runCLI("bench", "device", "--data-dir", dir, "--max-load", bad); code != 2 || !strings.Contains(stderr, "max-load") {
			t.Errorf("--max-load %s: exit %d, %q", bad, code, stderr)
		}
	}
}
