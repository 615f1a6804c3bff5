package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
		want, _ := p.IOFloor(e.DeviceReads())
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

// TestFirstDashboardRunHasIOFloor: a dashboard started on a fresh data
// directory measures the storage in the background (the pages show its
// progress, then what it measured), and the first run started from it
// ends with io_floor_s and io_efficiency in its epoch records (the API),
// the epochs CSV and the run page, which names the profile.
func TestFirstDashboardRunHasIOFloor(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the storage and runs a child")
	}
	t.Setenv(devprofile.ProbeEnv, "")
	dir := t.TempDir()
	if code, _, stderr := runCLI("data", "gen", "--preset", "tiny", "--quiet", "--data-dir", dir); code != 0 {
		t.Fatalf("data gen: %s", stderr)
	}
	base, get := serveFor(t, dir)
	// The banner follows the measurement to its end.
	var banner string
	deadline := time.Now().Add(2 * time.Minute)
	for {
		code, body := get("/storage")
		if code == 200 && !strings.Contains(body, "Measuring this host's storage") {
			banner = body
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the storage measurement did not end: %d %s", code, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	k, err := devprofile.KeyOf(dataset.DatasetsDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	p, path, err := devprofile.Load(dir, k)
	if err != nil {
		t.Fatalf("the dashboard measured no profile (banner %s): %v", banner, err)
	}
	if !strings.Contains(banner, "measured this host&#39;s storage (short mode, once)") || !strings.Contains(banner, path) {
		t.Errorf("the banner does not say what was measured: %s", banner)
	}

	// The first run, from the dashboard's API.
	cresp, err := http.Get(base + "/api/csrf")
	if err != nil {
		t.Fatal(err)
	}
	var tok struct {
		Token string `json:"token"`
	}
	json.NewDecoder(cresp.Body).Decode(&tok)
	cresp.Body.Close()
	req, _ := http.NewRequest("POST", base+"/api/experiments", strings.NewReader(
		`{"name":"floor","dataset":"tiny","epochs":1,"compute":"none","batch_size":256,"axes":{"system":["pyg+"],"mem_limit":["none"]}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-CSRF-Token", tok.Token)
	for _, c := range cresp.Cookies() {
		req.AddCookie(c)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Fatalf("create: %d %s", resp.StatusCode, body)
	}
	var exp struct {
		ID int64 `json:"id"`
	}
	json.Unmarshal(body, &exp)
	var run struct {
		Runs []struct {
			ID     int64  `json:"id"`
			Status string `json:"status"`
		} `json:"runs"`
	}
	for deadline := time.Now().Add(3 * time.Minute); ; {
		_, b := get(fmt.Sprintf("/api/experiments/%d/runs", exp.ID))
		json.Unmarshal([]byte(b), &run)
		if len(run.Runs) == 1 && run.Runs[0].Status != "queued" && run.Runs[0].Status != "running" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run did not end: %s", b)
		}
		time.Sleep(300 * time.Millisecond)
	}
	id := run.Runs[0].ID
	if run.Runs[0].Status != "done" {
		_, b := get(fmt.Sprintf("/api/runs/%d", id))
		t.Fatalf("run %d: %s", id, b)
	}
	_, b := get(fmt.Sprintf("/api/runs/%d/epochs", id))
	var eps struct {
		Epochs []metrics.EpochRecord `json:"epochs"`
	}
	if err := json.Unmarshal([]byte(b), &eps); err != nil {
		t.Fatalf("epochs: %v %s", err, b)
	}
	checkFloors(t, eps.Epochs, p)
	_, csv := get(fmt.Sprintf("/experiments/%d/export/epochs.csv", exp.ID))
	lines := strings.Split(strings.TrimSpace(csv), "\n")
	if len(lines) != 2 {
		t.Fatalf("epochs.csv: %q", csv)
	}
	col := -1
	for i, h := range strings.Split(lines[0], ",") {
		if h == "io_floor_s" {
			col = i
		}
	}
	if f := strings.Split(lines[1], ","); col < 0 || col >= len(f) || f[col] == "" {
		t.Errorf("epochs.csv has no io_floor_s value (column %d): %s", col, csv)
	}
	_, page := get(fmt.Sprintf("/runs/%d", id))
	if !strings.Contains(page, "against the storage profile "+path) {
		t.Errorf("the run page does not name the floor's profile %s", path)
	}
	if !strings.Contains(page, "device reads replayed at the measured capability") || strings.Contains(page, "none yet: the run") {
		t.Errorf("the run page's epoch row has no I/O floor")
	}
}

// TestRunBeforeTheProfileGetsItsFloorFilledIn: a run recorded while the
// storage was not measured says so (its log, its run page) and keeps its
// epochs' device reads; the dashboard started later measures the storage
// and fills in that run's floor from them (the API, the page, the digest).
func TestRunBeforeTheProfileGetsItsFloorFilledIn(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the storage and runs a child")
	}
	dir := t.TempDir()
	if code, _, stderr := runCLI("data", "gen", "--preset", "tiny", "--quiet", "--data-dir", dir); code != 0 {
		t.Fatalf("data gen: %s", stderr)
	}
	grid := filepath.Join(t.TempDir(), "grid.json")
	os.WriteFile(grid, []byte(`{"name":"before","dataset":"tiny","epochs":2,"compute":"none","batch_size":256,"axes":{"system":["pyg+"],"mem_limit":["none"]}}`), 0o644)
	// The storage probe is off here (TestMain): the run starts unmeasured.
	if code, _, stderr := runCLI("exp", "create", "--file", grid, "--wait", "--data-dir", dir); code != 0 {
		t.Fatalf("exp create: %s", stderr)
	}
	if all, _ := devprofile.List(dir); len(all) != 0 {
		t.Fatalf("a profile was measured with the probe off: %v", all)
	}

	t.Setenv(devprofile.ProbeEnv, "")
	_, get := serveFor(t, dir)
	// Charts read while the storage is measured: the run has no floor yet
	// (and its digest is cached without one).
	for deadline := time.Now().Add(time.Minute); ; {
		code, body := get("/experiments/1/charts.json")
		if code == 200 {
			if !strings.Contains(body, "No epoch has an I/O floor") {
				t.Fatalf("the charts show a floor before the storage was measured: %s", body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("charts.json: %d %s", code, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	var banner string
	for deadline := time.Now().Add(2 * time.Minute); ; {
		code, body := get("/storage")
		if code == 200 && strings.Contains(body, "epochs recorded before it was filled in") {
			banner = body
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no floor filled in after the measurement: %d %s", code, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !strings.Contains(banner, "the I/O floor of 2 epochs recorded before it was filled in") {
		t.Errorf("banner %s", banner)
	}
	p, _, err := devprofile.Load(dir, mustKey(t, filepath.Join(dataset.DatasetsDir(dir), "tiny")))
	if err != nil {
		t.Fatal(err)
	}
	_, b := get("/api/runs/1/epochs")
	var eps struct {
		Epochs []metrics.EpochRecord `json:"epochs"`
	}
	if err := json.Unmarshal([]byte(b), &eps); err != nil || len(eps.Epochs) != 2 {
		t.Fatalf("epochs: %v %s", err, b)
	}
	checkFloors(t, eps.Epochs, p)
	_, page := get("/runs/1")
	if !strings.Contains(page, "filled in after the run (it started before this host&#39;s storage was measured)") {
		t.Errorf("the run page does not say its floor was filled in afterwards")
	}
	// The digests made before the fill are stale: the charts now have it.
	if _, body := get("/experiments/1/charts.json"); strings.Contains(body, "No epoch has an I/O floor") || !strings.Contains(body, "io-efficiency") {
		t.Errorf("the experiment's charts still lack the filled-in floor: %.400s", body)
	}
}

func mustKey(t *testing.T, path string) devprofile.Key {
	t.Helper()
	k, err := devprofile.KeyOf(path)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// serveFor runs `outcore serve` on dir on a free loopback port until the
// test ends, and returns its base URL and a GET of a path (status, body).
func serveFor(t *testing.T, dir string) (string, func(path string) (int, string)) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, discard, []string{"serve", "--addr", addr, "--data-dir", dir}) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("serve did not stop")
		}
	})
	base := "http://" + addr
	return base, func(path string) (int, string) {
		resp, err := http.Get(base + path)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
}
