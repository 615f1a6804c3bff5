// Package devprofile keeps the device profiles of the I/O floor (DESIGN
// §11): what the storage holding the datasets can do, measured once per
// host and file system, so that every epoch record carries io_floor_s and
// io_efficiency without a manual step.
//
// A profile lives in the data directory's device-profiles/ folder, named
// by the host and the file system it measured (osutil.FileSystemID): a
// data directory moved to other storage, or shared by the nodes of a
// cluster, finds no profile of its new storage and measures again
// rather than reusing one of other storage. Ensure measures in the short
// mode (ShortPlan, a few seconds) when none is there, once for every
// process that asks at the same time (an advisory lock); `outcore bench
// device` takes the full measurement (FullPlan) and writes the same file.
package devprofile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"outcore/engine/metrics"
	"outcore/engine/vocab"
	"outcore/internal/osutil"
)

// DirName is the data directory's folder of device profiles.
const DirName = "device-profiles"

// ProbeEnv, set to "off", stops Ensure from measuring: a run then uses a
// profile that is there and otherwise has no floor until one is measured
// (its floor is filled in then, from the reads its records keep). For
// hosts where a few seconds of full-speed reads would disturb others, and
// for test suites that start many runs on fresh data directories.
const ProbeEnv = "OUTCORE_STORAGE_PROBE"

// ProbeOff reports whether ProbeEnv turns the measurement off.
func ProbeOff() bool { return strings.EqualFold(os.Getenv(ProbeEnv), "off") }

// The log lines the run page reads (web's ioFloorFact): a run that started
// before its storage was measured, and the event of a floor filled in
// afterwards (experiments.FillIOFloors).
// (vocab's: the run page reads them without the runtime).
const (
	NoFloorYet    = vocab.NoFloorYet
	FloorFilledIn = vocab.FloorFilledIn
)

// Dir is the device-profile folder of a data directory.
func Dir(dataDir string) string { return filepath.Join(dataDir, DirName) }

// Key names the profile of the storage holding path on this host:
// "<host>--<file system id>".
type Key struct {
	Host    string // os.Hostname
	Storage string // osutil.FileSystemID of the path
}

// KeyOf is the key of the storage holding path on this host.
func KeyOf(path string) (Key, error) {
	host, err := os.Hostname()
	if err != nil {
		return Key{}, fmt.Errorf("host name: %w", err)
	}
	id, err := osutil.FileSystemID(path)
	if err != nil {
		return Key{}, err
	}
	return Key{Host: host, Storage: id}, nil
}

// File is the key's profile file name.
func (k Key) File() string { return safeName(k.Host) + "--" + safeName(k.Storage) + ".json" }

// String is "storage S on host H".
func (k Key) String() string { return fmt.Sprintf("storage %s on host %s", k.Storage, k.Host) }

// safeName keeps letters, digits, '.', '-' and '_' (a host name or file
// system id in a file name).
func safeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "_"
	}
	return string(b)
}

// Path is where the data directory keeps the key's profile.
func Path(dataDir string, k Key) string { return filepath.Join(Dir(dataDir), k.File()) }

// Load reads the profile of the key from the data directory. The error
// wraps fs.ErrNotExist when there is none. A profile written before
// profiles were kept per file system (<data dir>/device-profile.json) is
// used when it measured the same host and device.
func Load(dataDir string, k Key) (*metrics.DeviceProfile, string, error) {
	path := Path(dataDir, k)
	p, err := metrics.ReadDeviceProfile(path)
	if err == nil {
		if p.Hostname != k.Host || (p.Storage != "" && p.Storage != k.Storage) {
			return nil, path, fmt.Errorf("%s: measured %s on host %q, not %s", path, p.Storage, p.Hostname, k)
		}
		return p, path, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, path, err
	}
	legacy := metrics.DeviceProfilePath(dataDir)
	if lp, lerr := metrics.ReadDeviceProfile(legacy); lerr == nil && lp.Hostname == k.Host && osutil.DevicePart(lp.Device) != "" && strings.HasPrefix(k.Storage, osutil.DevicePart(lp.Device)) {
		return lp, legacy, nil
	}
	return nil, path, err
}

// Save writes p as the profile of its host and storage (atomically: a
// reader sees the old file or the new one) and returns its path.
func Save(dataDir string, p *metrics.DeviceProfile) (string, error) {
	if err := p.Check(); err != nil {
		return "", err
	}
	if p.Hostname == "" || p.Storage == "" {
		return "", errors.New("device profile: no host or storage named")
	}
	if err := os.MkdirAll(Dir(dataDir), 0o755); err != nil {
		return "", err
	}
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return "", err
	}
	path := Path(dataDir, Key{Host: p.Hostname, Storage: p.Storage})
	tmp, err := os.CreateTemp(Dir(dataDir), ".profile-*.tmp")
	if err != nil {
		return "", err
	}
	_, err = tmp.Write(append(b, '\n'))
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("write device profile %s: %w", path, err)
	}
	return path, nil
}

// Progress is one step of a measurement.
type Progress struct {
	Step, Steps int    // 1-based step of how many
	What        string // "randread 4096 B depth 64", "writing the 256 MiB probe file", ...
}

// Outcome is what Ensure found or did.
type Outcome struct {
	Profile  *metrics.DeviceProfile // nil: no floor for this run
	Path     string                 // the profile's file (or where it would be)
	Measured bool                   // this call measured it
	Waited   time.Duration          // time spent waiting for another process's measurement
	// Note is one line for the run's log: which profile the floor uses,
	// or why there is none.
	Note string
}

// Ensure returns the profile of the storage holding dsDir on this host
// from dataDir's device-profiles, measuring it first in the short mode
// when there is none (unless ProbeEnv is "off"). Processes that call it at
// once measure once: the others wait for the lock and read what it wrote.
// progress, when not nil, hears each step. Ensure fails only when ctx
// ends; a measurement that fails gives an Outcome without a profile whose
// Note says why.
func Ensure(ctx context.Context, dataDir, dsDir string, progress func(Progress)) (Outcome, error) {
	return ensure(ctx, dataDir, dsDir, ShortPlan(), progress)
}

// ensure is Ensure measuring by plan.
func ensure(ctx context.Context, dataDir, dsDir string, plan Plan, progress func(Progress)) (Outcome, error) {
	k, err := KeyOf(dsDir)
	if err != nil {
		return Outcome{Note: fmt.Sprintf("no I/O floor: %v", err)}, nil
	}
	if o, ok := loaded(dataDir, k); ok {
		return o, nil
	}
	if ProbeOff() {
		return Outcome{Path: Path(dataDir, k), Note: fmt.Sprintf("%s %s was not measured and %s=off (outcore bench device measures it; the floor is filled in then)", NoFloorYet, k, ProbeEnv)}, nil
	}
	if err := os.MkdirAll(Dir(dataDir), 0o755); err != nil {
		return Outcome{Note: fmt.Sprintf("no I/O floor: %v", err)}, nil
	}
	lf, err := os.OpenFile(lockPath(dataDir, k), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return Outcome{Note: fmt.Sprintf("no I/O floor: %v", err)}, nil
	}
	defer lf.Close()
	t0 := time.Now()
	waited := false
	for {
		err := osutil.TryLock(lf)
		if err == nil {
			break
		}
		if !errors.Is(err, osutil.ErrLocked) {
			return Outcome{Note: fmt.Sprintf("no I/O floor: %v", err)}, nil
		}
		if !waited && progress != nil {
			progress(Progress{What: "waiting for another process's measurement of " + k.String()})
		}
		waited = true
		select {
		case <-ctx.Done():
			return Outcome{}, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	defer osutil.Unlock(lf)
	var wait time.Duration
	if waited {
		wait = time.Since(t0)
	}
	if o, ok := loaded(dataDir, k); ok { // the process we waited for wrote it
		o.Waited = wait
		return o, nil
	}
	p, err := Measure(ctx, plan, probeDir(dataDir, dsDir), progress)
	if err != nil {
		if ctx.Err() != nil {
			return Outcome{}, ctx.Err()
		}
		return Outcome{Path: Path(dataDir, k), Waited: wait, Note: fmt.Sprintf("no I/O floor: measuring %s failed: %v", k, err)}, nil
	}
	path, err := Save(dataDir, p)
	if err != nil {
		return Outcome{Path: Path(dataDir, k), Waited: wait, Note: fmt.Sprintf("no I/O floor: %v", err)}, nil
	}
	return Outcome{Profile: p, Path: path, Measured: true, Waited: wait, Note: fmt.Sprintf("measured this host's storage (%s mode, once): %s", p.Mode, Describe(p, path))}, nil
}

// lockPath is the lock file of the key's measurement.
func lockPath(dataDir string, k Key) string {
	return filepath.Join(Dir(dataDir), "."+strings.TrimSuffix(k.File(), ".json")+".lock")
}

// loaded is Ensure's outcome when the key's profile is there.
func loaded(dataDir string, k Key) (Outcome, bool) {
	p, path, err := Load(dataDir, k)
	if err != nil {
		return Outcome{}, false
	}
	return Outcome{Profile: p, Path: path, Note: "I/O floor against " + Describe(p, path)}, true
}

// Describe is one line naming a profile: its file, mode, when, and its
// sequential bandwidth and best 4 KiB IOPS.
func Describe(p *metrics.DeviceProfile, path string) string {
	mode := p.Mode
	if mode == "" {
		mode = ModeFull
	}
	s := fmt.Sprintf("the storage profile %s (%s mode, measured at %s; sequential %.0f MB/s", path, mode, p.MeasuredAt, p.SeqBytesPerS/1e6)
	if iops, ok := p.BestIOPS(metrics.RequestClass(4096)); ok {
		s += fmt.Sprintf(", 4 KiB %.0f IOPS", iops)
	}
	return s + ")"
}

// probeDir is the folder the short measurement writes its file in: on the
// file system of dsDir (the storage measured), the profiles folder when
// that is the same file system.
func probeDir(dataDir, dsDir string) string {
	a, aerr := osutil.FileSystemID(Dir(dataDir))
	b, berr := osutil.FileSystemID(dsDir)
	if aerr == nil && berr == nil && a == b {
		return Dir(dataDir)
	}
	return dsDir
}

// List returns the data directory's profiles (any host), by file name.
func List(dataDir string) ([]*metrics.DeviceProfile, error) {
	ents, err := os.ReadDir(Dir(dataDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*metrics.DeviceProfile
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if p, err := metrics.ReadDeviceProfile(filepath.Join(Dir(dataDir), e.Name())); err == nil && p.Storage != "" {
			out = append(out, p)
		}
	}
	return out, nil
}
