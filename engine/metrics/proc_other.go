//go:build !linux

package metrics

import (
	"errors"
)

// ErrNoCgroup reports that the process is not in a memory cgroup whose usage
// can be read.
var ErrNoCgroup = errors.New("no readable memory cgroup")

var errNoProc = errors.New("process counters need Linux /proc")

// ProcReadBytes is unavailable off Linux.
func ProcReadBytes() (int64, error) { return 0, errNoProc }

// ProcRSSBytes is unavailable off Linux.
func ProcRSSBytes() (int64, error) { return 0, errNoProc }

// ProcCPUSeconds is unavailable off Linux.
func ProcCPUSeconds() (float64, error) { return 0, errNoProc }

// SystemCPUTimes is unavailable off Linux.
func SystemCPUTimes() (total, iowait int64, err error) { return 0, 0, errNoProc }

// MemoryCgroupFile is unavailable off Linux.
func MemoryCgroupFile() (string, error) { return "", ErrNoCgroup }

// ReadInt64File is unavailable off Linux.
func ReadInt64File(p string) (int64, error) { return 0, errNoProc }

// CollectHost returns what Go knows without /proc.
func CollectHost() HostFacts { return HostFacts{GPU: "none"} }

// DiskModel is unknown off Linux.
func DiskModel(path string) string { return "" }

// MemoryCgroupLimit is unavailable off Linux.
func MemoryCgroupLimit() (int64, bool) { return 0, false }

// ProcPeakRSSBytes is unavailable off Linux.
func ProcPeakRSSBytes() (int64, error) { return 0, errNoProc }
