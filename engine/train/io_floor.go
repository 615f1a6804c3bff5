package train

// The I/O floor of each epoch (DESIGN §11): when `outcore bench device`
// measured the storage of the data directory on this host, each epoch
// record gets io_floor_s (its device reads replayed at that capability)
// and io_efficiency = io_floor_s / epoch_s.

import (
	"fmt"
	"os"

	"outcore/engine/metrics"
	"outcore/internal/osutil"
)

// deviceProfileFor returns the device profile of dataDir when it describes
// the storage the dataset in dsDir is on, on this host; otherwise nil and
// why not (for the run's log).
func deviceProfileFor(dataDir, dsDir string) (*metrics.DeviceProfile, string) {
	p, err := metrics.LoadDeviceProfile(dataDir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, "no I/O floor: this data directory's storage was not measured (outcore bench device)"
		}
		return nil, fmt.Sprintf("no I/O floor: %v", err)
	}
	host, _ := os.Hostname()
	if p.Hostname != host {
		return nil, fmt.Sprintf("no I/O floor: the storage was measured on host %q, this is %q (run outcore bench device here)", p.Hostname, host)
	}
	if dev, err := osutil.DeviceID(dsDir); err != nil || dev != p.Device {
		return nil, fmt.Sprintf("no I/O floor: the dataset is on another file system (device %d) than the one measured (%d)", dev, p.Device)
	}
	return p, fmt.Sprintf("I/O floor against the storage measured at %s (%s; sequential %.0f MB/s)", p.MeasuredAt, p.File, p.SeqBytesPerS/1e6)
}

// fillIOFloor sets rec's io_floor_s and io_efficiency from the epoch's
// device reads (nothing without a profile).
func fillIOFloor(rec *metrics.EpochRecord, p *metrics.DeviceProfile, reads metrics.ReadTotals) {
	floor, ok := p.IOFloor(reads.Requests, reads.Bytes())
	if !ok {
		return
	}
	rec.IOFloorS = &floor
	if rec.EpochS > 0 {
		eff := floor / rec.EpochS
		rec.IOEfficiency = &eff
	}
}
