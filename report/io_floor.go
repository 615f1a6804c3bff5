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
func (c *Comparison) ioEfficiency(e ChartEntry, _ string) Chart {
	ch := c.perCell(e.ID, e.Title, "I/O floor / epoch time",
		e.Paper, func(r RunData) (float64, bool) { return r.Digest.IOEfficiency() })
	ch.Note = "Each epoch's I/O floor (its SSD reads replayed at the measured capability of the storage it read, on its host: measured once per host and file system before the first run, or by `outcore bench device`; requests by size at the best IOPS against bytes at the sequential bandwidth, DESIGN §11) over its epoch time: 1 is an epoch at the disk's speed, lower is time spent elsewhere. " + ch.Note
	if !c.anyIOFloor() {
		ch.Empty = "No epoch has an I/O floor: the storage these runs read was not measured (the measurement was off or failed; each run's I/O floor line says why). `outcore bench device` measures it and fills in the floor of the runs recorded before."
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
