package devprofile

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"outcore/engine/metrics"
	"outcore/internal/osutil"
)

// tinyPlan measures briefly: the logic under test, not the disk.
func tinyPlan() Plan {
	return Plan{Mode: ModeShort, FileBytes: 4 << 20, Seconds: 0.05, Depths: []int{4}, Sizes: []int64{512, 4096}, SeqBytes: 64 << 10, SeqDepth: 2}
}

func TestPlanCheck(t *testing.T) {
	if err := ShortPlan().Check(); err != nil {
		t.Errorf("ShortPlan: %v", err)
	}
	if err := FullPlan().Check(); err != nil {
		t.Errorf("FullPlan: %v", err)
	}
	for _, c := range []struct {
		name string
		edit func(*Plan)
		want string
	}{
		{"1-byte reads", func(p *Plan) { p.Sizes = []int64{1} }, "--sizes: 1 B, want 512 B"},
		{"not whole blocks", func(p *Plan) { p.Sizes = []int64{4000} }, "multiple of 512 B"},
		{"huge reads", func(p *Plan) { p.Sizes = []int64{1 << 30} }, "--sizes"},
		{"no sizes", func(p *Plan) { p.Sizes = nil }, "--sizes: none"},
		{"depth 0", func(p *Plan) { p.Depths = []int{0} }, "--depths: 0"},
		{"depth 1e9", func(p *Plan) { p.Depths = []int{1e9} }, "--depths: 1000000000, want 1 to 4096"},
		{"seq depth 1e9", func(p *Plan) { p.SeqDepth = 1e9 }, "--seq-depth 1000000000"},
		{"seq bytes 1", func(p *Plan) { p.SeqBytes = 1 }, "--seq-bytes: 1 B"},
		{"too much in flight", func(p *Plan) { p.Depths = []int{4096}; p.Sizes = []int64{1 << 20} }, "in flight, want at most 1GiB"},
		{"seconds 0", func(p *Plan) { p.Seconds = 0 }, "--seconds 0"},
		{"seconds NaN", func(p *Plan) { p.Seconds = nan() }, "--seconds NaN"},
		{"file too small", func(p *Plan) { p.FileBytes = 1 << 20; p.Sizes = []int64{512 << 10} }, "--size 1MiB, want at least 1MiB and 4 of the largest request"},
		{"mode", func(p *Plan) { p.Mode = "quick" }, `mode "quick"`},
		{"rounds -1", func(p *Plan) { p.Rounds = -1 }, "--rounds -1, want 1 to 9"},
		{"rounds 10", func(p *Plan) { p.Rounds = 10 }, "--rounds 10, want 1 to 9"},
	} {
		p := tinyPlan()
		c.edit(&p)
		err := p.Check()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %q", c.name, err, c.want)
		}
	}
}

func nan() float64 { z := 0.0; return z / z }

// newDataDir makes a data directory with a dataset folder.
func newDataDir(t *testing.T) (dataDir, dsDir string) {
	t.Helper()
	dataDir = t.TempDir()
	dsDir = filepath.Join(dataDir, "datasets", "d")
	if err := os.MkdirAll(dsDir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dataDir, dsDir
}

// skipWithoutDirect skips where the temporary directory refuses O_DIRECT.
func skipWithoutDirect(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), "O_DIRECT") {
		t.Skipf("the temp dir refuses O_DIRECT: %v", err)
	}
}

// TestEnsureMeasuresOnceThenReads: the first call measures (real file,
// io_uring, O_DIRECT), names the profile by this host and file system,
// removes its probe file and reports each step; the next reads it.
func TestEnsureMeasuresOnceThenReads(t *testing.T) {
	t.Setenv(ProbeEnv, "")
	dataDir, dsDir := newDataDir(t)
	var steps []Progress
	o, err := ensure(context.Background(), dataDir, dsDir, tinyPlan(), func(p Progress) { steps = append(steps, p) })
	if err != nil {
		t.Fatal(err)
	}
	if o.Profile == nil {
		skipWithoutDirect(t, errors.New(o.Note))
		t.Fatalf("no profile: %s", o.Note)
	}
	k, _ := KeyOf(dsDir)
	if !o.Measured || o.Path != Path(dataDir, k) || o.Profile.Storage != k.Storage || o.Profile.Hostname != k.Host || o.Profile.Mode != ModeShort {
		t.Errorf("outcome %+v", o)
	}
	if len(steps) != tinyPlan().Steps() || steps[len(steps)-1].Step != tinyPlan().Steps() || !strings.Contains(steps[1].What, "randread 512 B depth 4") {
		t.Errorf("progress %+v", steps)
	}
	if left, _ := filepath.Glob(filepath.Join(Dir(dataDir), ".outcore-probe-*")); len(left) != 0 {
		t.Errorf("probe file left: %v", left)
	}
	o2, err := ensure(context.Background(), dataDir, dsDir, tinyPlan(), func(Progress) { t.Error("the second call measured") })
	if err != nil || o2.Measured || o2.Profile == nil || o2.Profile.MeasuredAt != o.Profile.MeasuredAt || !strings.HasPrefix(o2.Note, "I/O floor against the storage profile "+o.Path) {
		t.Errorf("second call: %+v %v", o2, err)
	}
}

// TestEnsureWaitsForAnotherMeasurement: while another process holds the
// measurement's lock, Ensure waits and then reads what that one wrote,
// without measuring itself.
func TestEnsureWaitsForAnotherMeasurement(t *testing.T) {
	t.Setenv(ProbeEnv, "")
	dataDir, dsDir := newDataDir(t)
	k, err := KeyOf(dsDir)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(Dir(dataDir), 0o755)
	lf, err := os.OpenFile(lockPath(dataDir, k), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := osutil.TryLock(lf); err != nil {
		t.Fatal(err)
	}
	waiting := make(chan struct{})
	done := make(chan Outcome, 1)
	go func() {
		o, err := ensure(context.Background(), dataDir, dsDir, tinyPlan(), func(p Progress) {
			if strings.HasPrefix(p.What, "waiting for another process's measurement") {
				close(waiting)
			} else {
				t.Errorf("measured while another held the lock: %+v", p)
			}
		})
		if err != nil {
			t.Error(err)
		}
		done <- o
	}()
	select {
	case <-waiting:
	case <-time.After(30 * time.Second):
		t.Fatal("Ensure did not wait for the lock")
	}
	p := &metrics.DeviceProfile{Hostname: k.Host, Storage: k.Storage, Mode: ModeShort, MeasuredAt: "other",
		SeqBytesPerS: 1e9, Random: []metrics.IOPSPoint{{Bytes: 4096, Depth: 64, IOPS: 5e4}}}
	if _, err := Save(dataDir, p); err != nil {
		t.Fatal(err)
	}
	osutil.Unlock(lf)
	lf.Close()
	o := <-done
	if o.Measured || o.Profile == nil || o.Profile.MeasuredAt != "other" || o.Waited <= 0 {
		t.Errorf("outcome %+v", o)
	}
}

// TestEnsureOff: with the probe off nothing is measured and the note says
// what to do; a profile that is there is still used.
func TestEnsureOff(t *testing.T) {
	t.Setenv(ProbeEnv, "off")
	dataDir, dsDir := newDataDir(t)
	o, err := ensure(context.Background(), dataDir, dsDir, tinyPlan(), func(Progress) { t.Error("measured with the probe off") })
	if err != nil || o.Profile != nil || !strings.HasPrefix(o.Note, NoFloorYet) || !strings.Contains(o.Note, "outcore bench device") {
		t.Errorf("%+v %v", o, err)
	}
	k, _ := KeyOf(dsDir)
	Save(dataDir, &metrics.DeviceProfile{Hostname: k.Host, Storage: k.Storage, SeqBytesPerS: 1e9, Random: []metrics.IOPSPoint{{Bytes: 512, Depth: 1, IOPS: 1}}})
	if o, _ := ensure(context.Background(), dataDir, dsDir, tinyPlan(), nil); o.Profile == nil {
		t.Errorf("the profile there was not used: %s", o.Note)
	}
}

// TestLoadIsPerHostAndFileSystem: a profile of another host or file
// system is never used; one of the old single-file layout is, when it
// measured this host's device.
func TestLoadIsPerHostAndFileSystem(t *testing.T) {
	dataDir, dsDir := newDataDir(t)
	k, err := KeyOf(dsDir)
	if err != nil {
		t.Fatal(err)
	}
	prof := func(host, storage string) *metrics.DeviceProfile {
		return &metrics.DeviceProfile{Hostname: host, Storage: storage, SeqBytesPerS: 1e9, Random: []metrics.IOPSPoint{{Bytes: 4096, Depth: 64, IOPS: 5e4}}}
	}
	Save(dataDir, prof("other-host", k.Storage))
	Save(dataDir, prof(k.Host, "dev1.2-fs0000000000000000"))
	if _, _, err := Load(dataDir, k); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("another host's or file system's profile was used: %v", err)
	}
	// A file renamed onto this key's name but describing other storage.
	b, _ := os.ReadFile(Path(dataDir, Key{Host: "other-host", Storage: k.Storage}))
	os.WriteFile(Path(dataDir, k), b, 0o644)
	if _, _, err := Load(dataDir, k); err == nil || errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a profile of another host under this key's name: %v", err)
	}
	os.Remove(Path(dataDir, k))
	// The old layout: <data dir>/device-profile.json with st_dev.
	dev, _ := osutil.DeviceID(dsDir)
	old := prof(k.Host, "")
	old.Device = dev
	bj, _ := jsonOf(old)
	os.WriteFile(metrics.DeviceProfilePath(dataDir), bj, 0o644)
	if p, path, err := Load(dataDir, k); err != nil || path != metrics.DeviceProfilePath(dataDir) || p.Device != dev {
		t.Errorf("old layout: %v %s %v", p, path, err)
	}
	old.Device = dev + 1<<40
	bj, _ = jsonOf(old)
	os.WriteFile(metrics.DeviceProfilePath(dataDir), bj, 0o644)
	if _, _, err := Load(dataDir, k); err == nil {
		t.Error("an old-layout profile of another device was used")
	}
	if all, err := List(dataDir); err != nil || len(all) != 2 {
		t.Errorf("List: %d %v", len(all), err)
	}
}

func jsonOf(p *metrics.DeviceProfile) ([]byte, error) { return json.Marshal(p) }

// TestMeasureInRounds: a plan of 3 rounds measures every point three
// times, in whole rounds one after another, and keeps each point's median
// with its rounds (ascending), the sequential bandwidth likewise; a plan
// of one round records no rounds.
func TestMeasureInRounds(t *testing.T) {
	plan := tinyPlan()
	plan.Mode, plan.Rounds = ModeFull, 3
	var steps []Progress
	p, err := MeasureFile(context.Background(), plan, filepath.Join(t.TempDir(), "probe.bin"), func(pr Progress) { steps = append(steps, pr) })
	skipWithoutDirect(t, err)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != plan.Steps() || plan.Steps() != 1+3*(2+1) || !strings.Contains(steps[len(steps)-1].What, "(sequential) (round 3 of 3)") {
		t.Errorf("steps %d (plan %d): %+v", len(steps), plan.Steps(), steps)
	}
	if p.Rounds != 3 || len(p.Random) != 2 || len(p.SeqRounds) != 3 || p.SeqBytesPerS != p.SeqRounds[1] {
		t.Fatalf("profile rounds %d, %d points, sequential %v of %v", p.Rounds, len(p.Random), p.SeqBytesPerS, p.SeqRounds)
	}
	for _, pt := range p.Random {
		r := pt.IOPSRounds
		if len(r) != 3 || !(r[0] <= r[1] && r[1] <= r[2]) || pt.IOPS != r[1] || pt.RoundsSpread() != r[2]/r[0] {
			t.Errorf("point %+v: want three ascending rounds and their median", pt)
		}
	}
	if err := p.Check(); err != nil {
		t.Error(err)
	}
	one, err := MeasureFile(context.Background(), tinyPlan(), filepath.Join(t.TempDir(), "probe.bin"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if one.Rounds != 0 || one.SeqRounds != nil || one.Random[0].IOPSRounds != nil || one.Random[0].RoundsSpread() != 1 {
		t.Errorf("one round recorded rounds: %+v", one)
	}
}
