package train

// The disk space a variant's own files take (DESIGN §5, "Disk space"):
// a variant that writes files for training in Prepare — copies of feature
// rows above all, DiskGNN's packed chunks and disk caches, whose size
// against the feature table is DiskGNN's Fig. 12 and Fig. 13 — records
// them once with HoldDisk, and the run's summary carries them
// (metrics.SummaryRecord's feature_disk_bytes, feature_disk_blowup and
// disk_files).

import "fmt"

// diskHeld is what HoldDisk recorded.
type diskHeld struct {
	featureFiles []string
	files        map[string]int64
}

// HoldDisk records the files the variant wrote for training, by name in
// bytes; featureFiles names those that hold copies of feature rows (their
// sum is the summary's feature_disk_bytes). A later call replaces the
// record. It refuses a negative size or a feature file not among files.
func (e *Env) HoldDisk(files map[string]int64, featureFiles ...string) error {
	h := &diskHeld{files: map[string]int64{}}
	for name, b := range files {
		if b < 0 {
			return fmt.Errorf("train: disk file %s of %d bytes", name, b)
		}
		h.files[name] = b
	}
	for _, name := range featureFiles {
		if _, ok := files[name]; !ok {
			return fmt.Errorf("train: feature file %s is not among the files held (%d)", name, len(files))
		}
	}
	h.featureFiles = featureFiles
	e.prepMu.Lock()
	e.disk = h
	e.prepMu.Unlock()
	return nil
}

// diskAccount is the summary's disk fields: nil without HoldDisk; the
// blowup only with a feature table to divide by. The caller holds prepMu.
func (e *Env) diskAccount() (featureBytes *int64, blowup *float64, files map[string]int64) {
	if e.disk == nil {
		return nil, nil, nil
	}
	var fb int64
	for _, name := range e.disk.featureFiles {
		fb += e.disk.files[name]
	}
	featureBytes = &fb
	if e.Dataset != nil {
		if table := e.Dataset.FeatureBytes(); table > 0 {
			x := float64(fb) / float64(table)
			blowup = &x
		}
	}
	return featureBytes, blowup, e.disk.files
}
