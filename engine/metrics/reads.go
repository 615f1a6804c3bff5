package metrics

import (
	"path/filepath"
	"sync/atomic"

	"outcore/engine/dataset"
)

// File kinds of a run's device-read account (DESIGN §5): what a file read
// from the block device holds.
const (
	FileFeatures = "features" // feature rows: features.bin, and a variant's own copies of them on disk
	FileTopology = "topology" // the graph: indices.bin, indptr.bin, a neighbour cache dumped to disk
	FileOther    = "other"    // anything else (runtime files, labels, ...)
)

// ReadAccount sums the bytes read from the block device, and the feature
// rows those bytes brought in, by file kind over one run: every
// engine/storage File opened with it, every memory-mapped file whose page
// faults are measured (ThreadMeter), and what variants add; and the
// device requests (engine/storage's, by size) and page faults (AddFaults)
// those bytes took, for the I/O floor. The run loop
// takes the difference over an epoch into the epoch record
// (feature_bytes_read, topology_bytes_read, rows_from_device). A nil
// *ReadAccount counts nothing. It is safe for concurrent use.
type ReadAccount struct {
	classify func(path string) string
	c        [3]struct{ bytes, rows, delivered atomic.Int64 }
	requests [NumRequestClasses]atomic.Int64
	faults   struct{ n, bytes, threads atomic.Int64 }
}

// NewReadAccount returns an empty account; classify names the kind of a
// file by its path (nil: DatasetFileKind).
func NewReadAccount(classify func(path string) string) *ReadAccount {
	if classify == nil {
		classify = DatasetFileKind
	}
	return &ReadAccount{classify: classify}
}

// DatasetFileKind classifies the files of a dataset directory (DESIGN §4)
// by name: features.bin is features, indices.bin and indptr.bin topology,
// anything else other.
func DatasetFileKind(path string) string {
	switch filepath.Base(path) {
	case dataset.FeaturesFile:
		return FileFeatures
	case dataset.IndicesFile, dataset.IndptrFile:
		return FileTopology
	}
	return FileOther
}

// KindOf is the kind of the file at path ("other" for a nil account).
func (a *ReadAccount) KindOf(path string) string {
	if a == nil {
		return FileOther
	}
	return a.classify(path)
}

func kindIndex(kind string) int {
	switch kind {
	case FileFeatures:
		return 0
	case FileTopology:
		return 1
	}
	return 2
}

// Add counts bytes read from the device for a file of kind, and the rows
// (of the file's row size) those bytes brought in; rows matter for
// features only (rows_from_device). An unknown kind counts as other.
func (a *ReadAccount) Add(kind string, bytes, rows int64) {
	if a == nil || (bytes == 0 && rows == 0) {
		return
	}
	c := &a.c[kindIndex(kind)]
	c.bytes.Add(bytes)
	c.rows.Add(rows)
}

// AddDelivered counts rows engine/storage delivered from the device into a
// caller's destination for a file of kind (storage.Stats.DeliveredRows):
// the storage layer's own count, kept apart from the rows Add counts and
// variants add, so that rows_from_device can be held against it
// (rows_delivered, DESIGN §5).
func (a *ReadAccount) AddDelivered(kind string, rows int64) {
	if a == nil || rows == 0 {
		return
	}
	a.c[kindIndex(kind)].delivered.Add(rows)
}

// AddRequests counts device requests by size class (RequestClass), for
// the I/O floor (DESIGN §11): engine/storage counts every request it
// hands the device; memory-mapped reads have no known requests.
func (a *ReadAccount) AddRequests(byClass *[NumRequestClasses]int64) {
	if a == nil {
		return
	}
	for i, n := range byClass {
		if n != 0 {
			a.requests[i].Add(n)
		}
	}
}

// AddFaults counts major page faults on memory maps and the device bytes
// they read (r: a ThreadMeter.StopMapped over spans that only copy from
// maps), for the I/O floor (DESIGN §11), which models them as requests of
// r.Bytes / r.Faults each. The bytes are counted by Add as well, under
// their file's kind; this adds no bytes to the totals.
func (a *ReadAccount) AddFaults(r MappedReads) {
	if a == nil || (r.Faults == 0 && r.Bytes == 0) {
		return
	}
	a.faults.n.Add(r.Faults)
	a.faults.bytes.Add(r.Bytes)
}

// SetFaultThreads says how many threads of the run can wait on page faults
// at once (a variant's gather threads and samplers over its maps): the
// depth the floor takes for its faults. The largest value set stays; none
// set (0), the floor takes the device's best IOPS at any depth.
func (a *ReadAccount) SetFaultThreads(n int) {
	if a == nil {
		return
	}
	for {
		old := a.faults.threads.Load()
		if int64(n) <= old || a.faults.threads.CompareAndSwap(old, int64(n)) {
			return
		}
	}
}

// ReadTotals is a reading of a ReadAccount.
type ReadTotals struct {
	FeatureBytes, FeatureRows int64
	// FeatureRowsDelivered is the feature rows engine/storage delivered
	// from the device (AddDelivered).
	FeatureRowsDelivered int64
	TopologyBytes        int64
	OtherBytes           int64
	// Requests are the device requests by size class (all kinds).
	Requests [NumRequestClasses]int64
	// Faults are the major page faults on memory maps (AddFaults), and
	// FaultThreads the threads that could wait on them at once
	// (SetFaultThreads; a setting, not differenced by Sub).
	Faults       MappedReads
	FaultThreads int
}

// Bytes is every device byte of the reading.
func (t ReadTotals) Bytes() int64 { return t.FeatureBytes + t.TopologyBytes + t.OtherBytes }

// Totals reads the account (zero for nil).
func (a *ReadAccount) Totals() ReadTotals {
	if a == nil {
		return ReadTotals{}
	}
	t := ReadTotals{
		FeatureBytes: a.c[0].bytes.Load(), FeatureRows: a.c[0].rows.Load(),
		FeatureRowsDelivered: a.c[0].delivered.Load(),
		TopologyBytes:        a.c[1].bytes.Load(),
		OtherBytes:           a.c[2].bytes.Load(),
	}
	for i := range t.Requests {
		t.Requests[i] = a.requests[i].Load()
	}
	t.Faults = MappedReads{Bytes: a.faults.bytes.Load(), Faults: a.faults.n.Load()}
	t.FaultThreads = int(a.faults.threads.Load())
	return t
}

// Sub is t − u, the reads between two readings.
func (t ReadTotals) Sub(u ReadTotals) ReadTotals {
	d := ReadTotals{
		FeatureBytes: t.FeatureBytes - u.FeatureBytes, FeatureRows: t.FeatureRows - u.FeatureRows,
		FeatureRowsDelivered: t.FeatureRowsDelivered - u.FeatureRowsDelivered,
		TopologyBytes:        t.TopologyBytes - u.TopologyBytes,
		OtherBytes:           t.OtherBytes - u.OtherBytes,
	}
	for i := range d.Requests {
		d.Requests[i] = t.Requests[i] - u.Requests[i]
	}
	d.Faults = MappedReads{Bytes: t.Faults.Bytes - u.Faults.Bytes, Faults: t.Faults.Faults - u.Faults.Faults}
	d.FaultThreads = t.FaultThreads
	return d
}
