package report

// The I/O floor beside each variant (DESIGN §11).

// Mean keys of a digest whose steady epochs were measured against the
// host's device profile (absent otherwise).
const (
	IOFloorKey      = "io_floor_s"
	IOEfficiencyKey = "io_efficiency"
)

// IOEfficiency is the run's mean io_efficiency (io_floor_s / epoch_s)
// over its steady epochs that have one.
func (d *Digest) IOEfficiency() (float64, bool) {
	if d == nil {
		return 0, false
	}
	v, ok := d.Mean[IOEfficiencyKey]
	return v, ok
}

// ioEfficiency is each variant's I/O efficiency per grid point: how close
// its epochs came to what the disk allows.
func (c *Comparison) ioEfficiency() Chart {
	ch := c.perCell("io-efficiency", "I/O efficiency", "I/O floor / epoch time",
		"the roofline of data loading", func(r RunData) (float64, bool) { return r.Digest.IOEfficiency() })
	ch.Note = "Each epoch's I/O floor (its device reads replayed at this host's storage as `outcore bench device` measured it: requests by size at the best IOPS against bytes at the sequential bandwidth, DESIGN §11) over its epoch time: 1 is an epoch at the disk's speed, lower is time spent elsewhere. " + ch.Note
	if !c.anyIOFloor() {
		ch.Empty = "No epoch has an I/O floor: measure this host's storage once with `outcore bench device` (on a quiet machine), then run again."
	}
	return ch
}

// anyIOFloor reports whether some run has epochs with an I/O floor.
func (c *Comparison) anyIOFloor() bool {
	for _, r := range c.runs {
		if _, ok := r.Digest.IOEfficiency(); ok {
			return true
		}
	}
	return false
}
