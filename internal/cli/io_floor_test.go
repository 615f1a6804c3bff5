package cli

import (
	"bufio"
	"encoding/json"
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

// TestBenchDeviceRefusesNumbersThatMeasureNothing: every range-checked
// number of bench device is checked before anything is written, with an
// error that names the flag; no profile is left behind.
func TestBenchDeviceRefusesNumbersThatMeasureNothing(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--sizes", "1"}, "--sizes: 1 B, want 512 B"},
		{[]string{"--sizes", "1000"}, "multiple of 512 B"},
		{[]string{"--sizes", "512,128MiB"}, "--sizes"},
		{[]string{"--seq-depth", "1000000000"}, "--seq-depth 1000000000, want 1 to 4096"},
		{[]string{"--seq-depth", "0"}, "--seq-depth 0"},
		{[]string{"--seq-bytes", "100"}, "--seq-bytes: 100 B"},
		{[]string{"--depths", "1,100000"}, "--depths: 100000, want 1 to 4096"},
		{[]string{"--depths", "4096", "--sizes", "1048576"}, "in flight, want at most"},
		{[]string{"--seconds", "0"}, "--seconds 0"},
		{[]string{"--seconds", "1e9"}, "--seconds 1e+09"},
		{[]string{"--seconds", "NaN"}, "--seconds NaN"},
		{[]string{"--size", "4KiB"}, "--size"},
		{[]string{"--fio-pairs", "0"}, "--fio-pairs 0, want 1 to 20"},
		{[]string{"--fio", "maybe"}, "--fio \"maybe\""},
	} {
		code, _, stderr := runCLI(append([]string{"bench", "device", "--data-dir", dir}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("bench device %v: exit %d, stderr %q; want exit 2 naming %q", c.args, code, stderr, c.want)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("refused measurements left %v in the data directory", ents)
	}
}

// trainEpochs runs `outcore train` on tiny in dir and returns its stderr
// and epoch records.
func trainEpochs(t *testing.T, dir string) (string, []metrics.EpochRecord, string) {
	t.Helper()
	code, out, stderr := runCLI("train", "--data-dir", dir, "--dataset", "tiny", "--epochs", "1", "--batch", "256",
		"--compute", "none", "--allow-buffered")
	if code != 0 {
		t.Fatalf("train: %s", stderr)
	}
	var eps []metrics.EpochRecord
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e metrics.EpochRecord
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Type == metrics.TypeEpoch {
			eps = append(eps, e)
		}
	}
	return stderr, eps, out
}

// checkFloors: every epoch has io_floor_s = its kept reads at the profile,
// and io_efficiency = io_floor_s / epoch_s.
func checkFloors(t *testing.T, eps []metrics.EpochRecord, p *metrics.DeviceProfile) {
	t.Helper()
	if len(eps) == 0 {
		t.Fatal("no epoch records")
	}
	for _, e := range eps {
		if e.IOFloorS == nil || e.IOEfficiency == nil || len(e.IORequests) != metrics.NumRequestClasses {
			t.Fatalf("epoch %d: floor %v, efficiency %v, requests %v", e.Epoch, e.IOFloorS, e.IOEfficiency, e.IORequests)
		}
		var req [metrics.NumRequestClasses]int64
		copy(req[:], e.IORequests)
		want, _ := p.IOFloor(req, e.IOBytes)
		if *e.IOFloorS != want || math.Abs(*e.IOEfficiency-want/e.EpochS) > 1e-12 {
			t.Errorf("epoch %d: floor %v efficiency %v, want %v and %v from the profile", e.Epoch, *e.IOFloorS, *e.IOEfficiency, want, want/e.EpochS)
		}
	}
}

// TestFirstTrainMeasuresTheStorageAndMovesMeasureAgain: on a fresh data
// directory the first `outcore train` measures the storage (the short
// mode, with progress) and its epochs carry io_floor_s and io_efficiency;
// the second reuses the profile; the data directory moved to another file
// system (a loop-mounted ext4 image) measures that storage anew, beside
// the first profile, and its runs use the new one.
func TestFirstTrainMeasuresTheStorageAndMovesMeasureAgain(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the storage (a few seconds) three times")
	}
	t.Setenv(devprofile.ProbeEnv, "")
	dir := filepath.Join(t.TempDir(), "data")
	if code, _, stderr := runCLI("data", "gen", "--preset", "tiny", "--quiet", "--data-dir", dir); code != 0 {
		t.Fatalf("data gen: %s", stderr)
	}
	stderr, eps, out := trainEpochs(t, dir)
	if !strings.Contains(stderr, "measuring this host's storage once") || !strings.Contains(stderr, "randread 4096 B depth 64") ||
		!strings.Contains(stderr, "measured this host's storage (short mode, once)") {
		t.Fatalf("the first run did not say it measured the storage:\n%s", stderr)
	}
	k, err := devprofile.KeyOf(filepath.Join(dataset.DatasetsDir(dir), "tiny"))
	if err != nil {
		t.Fatal(err)
	}
	p, path, err := devprofile.Load(dir, k)
	if err != nil {
		t.Fatalf("no profile after the first run: %v", err)
	}
	if p.Mode != devprofile.ModeShort || p.Storage != k.Storage || len(p.Random) != len(devprofile.ShortPlan().Sizes) {
		t.Errorf("profile %+v", p)
	}
	checkFloors(t, eps, p)
	if !strings.Contains(out, "I/O floor against the storage profile "+path) {
		t.Errorf("the run's log does not name its profile %s", path)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(devprofile.Dir(dir), ".outcore-probe-*")); len(leftovers) != 0 {
		t.Errorf("the probe file was left behind: %v", leftovers)
	}

	// The second run: no measurement.
	stderr, eps, _ = trainEpochs(t, dir)
	if strings.Contains(stderr, "measuring") {
		t.Errorf("the second run measured again:\n%s", stderr)
	}
	checkFloors(t, eps, p)

	// Moved to another file system.
	mnt := mountLoopExt4(t, 512<<20)
	moved := filepath.Join(mnt, "data")
	if b, err := exec.Command("cp", "-a", dir, moved).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, b)
	}
	stderr, eps, _ = trainEpochs(t, moved)
	if !strings.Contains(stderr, "measured this host's storage (short mode, once)") {
		t.Fatalf("the moved data directory's first run did not measure its new storage:\n%s", stderr)
	}
	k2, err := devprofile.KeyOf(filepath.Join(dataset.DatasetsDir(moved), "tiny"))
	if err != nil {
		t.Fatal(err)
	}
	if k2.Storage == k.Storage {
		t.Fatalf("the loop-mounted file system has the same id %s", k.Storage)
	}
	p2, _, err := devprofile.Load(moved, k2)
	if err != nil {
		t.Fatalf("no profile of the new storage: %v", err)
	}
	checkFloors(t, eps, p2)
	all, err := devprofile.List(moved)
	if err != nil || len(all) != 2 {
		t.Errorf("the moved data directory has %d profiles (%v), want the old storage's and the new", len(all), err)
	}
}

// mountLoopExt4 makes an ext4 file system of size bytes in an image file,
// mounts it through a loop device and returns its mount point (unmounted
// at the test's end). It skips where that needs what this host lacks.
func mountLoopExt4(t *testing.T, size int64) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a loop device needs root")
	}
	mkfs, err := exec.LookPath("mkfs.ext4")
	if err != nil {
		t.Skip("no mkfs.ext4 (e2fsprogs)")
	}
	base := t.TempDir()
	img := filepath.Join(base, "fs.img")
	f, err := os.Create(img)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if b, err := exec.Command(mkfs, "-q", "-F", img).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4: %v %s", err, b)
	}
	mnt := filepath.Join(base, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command("mount", "-o", "loop", img, mnt).CombinedOutput(); err != nil {
		t.Skipf("loop mount refused here: %v %s", err, b)
	}
	t.Cleanup(func() {
		if b, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", mnt, err, b)
		}
	})
	return mnt
}
