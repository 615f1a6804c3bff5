package train

// The I/O floor of each epoch (DESIGN §11): each epoch record gets
// io_floor_s (its device reads replayed at the measured capability of the
// storage holding the dataset, on this host) and io_efficiency =
// io_floor_s / epoch_s. The profile is measured before the run by whoever
// starts it (outcore train, the dashboard's runner: devprofile.Ensure);
// the run only reads it. Without one, each epoch keeps its device reads
// (io_requests, io_bytes) and the floor is filled in once a profile exists.

import (
	"errors"
	"fmt"
	"io/fs"

	"outcore/engine/devprofile"
	"outcore/engine/metrics"
)

// deviceProfileFor returns the device profile of the storage holding dsDir
// on this host, from dataDir's device profiles; otherwise nil and why not.
// The second value is one line for the run's log either way.
func deviceProfileFor(dataDir, dsDir string) (*metrics.DeviceProfile, string) {
	k, err := devprofile.KeyOf(dsDir)
	if err != nil {
		return nil, fmt.Sprintf("no I/O floor: %v", err)
	}
	p, path, err := devprofile.Load(dataDir, k)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Sprintf("%s %s was not measured when this run started; its epochs keep their device reads, and their floor is filled in once a profile of it exists (%s)", devprofile.NoFloorYet, k, path)
	case err != nil:
		return nil, fmt.Sprintf("no I/O floor: %v", err)
	}
	return p, "I/O floor against " + devprofile.Describe(p, path)
}

// fillIOFloor keeps the epoch's device reads in rec and sets its
// io_floor_s and io_efficiency from them (nothing without a profile).
func fillIOFloor(rec *metrics.EpochRecord, p *metrics.DeviceProfile, reads metrics.ReadTotals) {
	rec.IORequests = append([]int64(nil), reads.Requests[:]...)
	rec.IOBytes = reads.Bytes()
	rec.MapFaults, rec.MapFaultBytes, rec.MapFaultThreads = reads.Faults.Faults, reads.Faults.Bytes, reads.FaultThreads
	metrics.FillIOFloor(rec, p)
}
