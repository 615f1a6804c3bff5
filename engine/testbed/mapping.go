package testbed

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"outcore/internal/units"
)

// The mapping of DESIGN §13: from a testbed, the dataset and batch shape of
// a run here and this host's measured storage to the run's settings. One
// rule for every paper; no value is tuned per claim.

// MeasuredAccelProfile is the accelerator profile measured on a real GPU
// from which the papers' GPUs' profiles are derived (engine/accel).
const MeasuredAccelProfile = "h100-pyg"

// MinEpochs is the least number of epochs a mapped run takes: one cold
// epoch and at least two warm ones.
const MinEpochs = 3

// ColdEpochs is the number of epochs at a run's start reported apart as
// cold (caches, page cache and buffers filling); the rest are warm.
const ColdEpochs = 1

// featureValueBytes is the size of one feature value (float32), here and
// in every paper.
const featureValueBytes = 4

// DatasetShape is the dataset a run here trains on.
type DatasetShape struct {
	Name       string
	Nodes      int64
	FeatureDim int
}

// FeatureBytes is the size of its feature table.
func (d DatasetShape) FeatureBytes() int64 {
	return d.Nodes * int64(d.FeatureDim) * featureValueBytes
}

// BatchShape is a run's mini-batch: seeds and fanout per layer.
type BatchShape struct {
	Batch  int
	Fanout []int
}

// BatchRows is M_b: the feature rows one batch needs, the seeds and their
// sampled neighbours layer by layer, batch·(1 + f1 + f1·f2 + …), at most
// every node. It bounds what the batch's sample touches (duplicates among
// the neighbours only make it less), so a buffer or cache sized in batches
// holds at least that many batches.
func BatchRows(b BatchShape, nodes int64) int64 {
	rows, layer := float64(b.Batch), float64(b.Batch)
	for _, f := range b.Fanout {
		layer *= float64(f)
		rows += layer
	}
	if n := float64(nodes); nodes > 0 && rows > n {
		rows = n
	}
	return int64(rows)
}

// Storage is what this host's storage can do, from its device profile
// (engine/devprofile, `outcore bench device`): the best random-read IOPS
// measured at 4 KiB at any depth, and the sequential read bandwidth.
// Zero values are unknown.
type Storage struct {
	RandReadIOPS float64
	SeqBytesPerS float64
	// Source names the profile (its host, file system and date).
	Source string
}

// Unit is what sizes a system's memory: a share of the feature bytes or
// a number of mini-batches.
type Unit string

const (
	// UnitShare sizes memory as the paper's share of its feature bytes.
	UnitShare Unit = "share of the feature bytes"
	// UnitBatches sizes memory as the paper's number of mini-batches (M_b).
	UnitBatches Unit = "mini-batches"
)

// units says, per system, which unit governs its host and its device
// memory (DESIGN §13): caches of features scale with the feature table,
// buffers of batches with the batch. A system not listed has its host
// memory as a share and its device memory in batches (a GPU that holds
// the batch it trains).
var governing = map[string][2]Unit{
	"gnndrive":  {UnitShare, UnitBatches}, // topology in the page cache; staging and feature buffers of batches (§4.2)
	"pyg+":      {UnitShare, UnitBatches}, // page cache of the memory map; the GPU holds the batch
	"ginex":     {UnitShare, UnitBatches}, // neighbour and feature caches; the superbatch's changesets on the GPU
	"mariusgnn": {UnitShare, UnitBatches}, // partition buffer; the GPU holds the batch
	"diskgnn":   {UnitShare, UnitShare},   // CPU and GPU caches of features
	"gids":      {UnitShare, UnitShare},   // constant CPU buffer and GPU software cache of features
	"helios":    {UnitShare, UnitShare},   // CPU and GPU tiers of the feature cache
}

// GoverningUnits returns the units of a system's host and device memory.
func GoverningUnits(system string) (host, device Unit) {
	name, _, _ := strings.Cut(system, ":")
	if u, ok := governing[name]; ok {
		return u[0], u[1]
	}
	return UnitShare, UnitBatches
}

// threadPerRequest are the systems that read with one blocking request
// per thread: their I/O concurrency is the host's thread count.
var threadPerRequest = map[string]bool{"ginex": true, "pyg+": true}

// ThreadPerRequest reports whether a system reads one request per thread.
func ThreadPerRequest(system string) bool {
	name, _, _ := strings.Cut(system, ":")
	return threadPerRequest[name]
}

// Memory is one memory of the paper's host mapped here, in both units.
type Memory struct {
	// PaperBytes is the paper's memory (its limit or budget).
	PaperBytes int64
	// Share is PaperBytes over the paper's feature bytes; ShareBytes is
	// that share of the feature bytes here.
	Share      float64
	ShareBytes int64
	// Batches is PaperBytes over the paper's M_b bytes (0 when the paper's
	// batch shape is not published); BatchBytes is that many of the
	// batches here.
	Batches    float64
	BatchBytes int64
	// Rule says where it comes from, for the run's deviations.
	Rule string
}

// Bytes is the memory in the unit given (0 when that unit is unknown).
func (m Memory) Bytes(u Unit) int64 {
	if u == UnitBatches {
		return m.BatchBytes
	}
	return m.ShareBytes
}

// Settings are what the mapping gives for one run: each field with the
// rule's words for the run's deviations. The zero fields of this-host
// change nothing.
type Settings struct {
	Testbed string
	// Emulated is false for this-host: nothing below applies.
	Emulated bool
	// FeatureBytes and BatchRows (M_b) are the run's here; BatchBytes its
	// M_b in bytes.
	FeatureBytes int64
	BatchRows    int64
	BatchBytes   int64
	// Host and Device are the paper's host and device memory mapped here.
	Host, Device Memory
	// IODepth is the I/O concurrency of a thread-per-request system: the
	// paper host's thread count as an I/O depth (ginex: an io_uring queue
	// of that depth; pyg+: that many gather threads; 0 when not derivable:
	// the run keeps its own, recorded).
	IODepth     int
	IODepthRule string
	// AccelProfile names the engine/accel profile of the paper's GPU for
	// `--compute model:PROFILE`; AccelDerived when it is derived from the
	// measured one, not measured on that GPU.
	AccelProfile string
	AccelDerived bool
	AccelRule    string
	// Dilation multiplies the modelled step time so that compute against
	// I/O stands as on the paper's host (0 when not derivable: the step is
	// not dilated, recorded).
	Dilation     float64
	DilationRule string
	// Epochs the run takes; the first ColdEpochs are reported apart.
	Epochs     int
	EpochsRule string
}

// Map applies the mapping of DESIGN §13. It is pure: the same inputs give
// the same settings.
func Map(tb *Profile, ds DatasetShape, bs BatchShape, st Storage) (Settings, error) {
	if tb == nil {
		return Settings{}, errors.New("testbed mapping: no testbed")
	}
	if ds.Nodes <= 0 || ds.FeatureDim <= 0 {
		return Settings{}, fmt.Errorf("testbed mapping: dataset %q has %d nodes of %d dims", ds.Name, ds.Nodes, ds.FeatureDim)
	}
	if bs.Batch <= 0 || len(bs.Fanout) == 0 {
		return Settings{}, fmt.Errorf("testbed mapping: batch %d with fanout %v", bs.Batch, bs.Fanout)
	}
	s := Settings{Testbed: tb.Name, FeatureBytes: ds.FeatureBytes(), BatchRows: BatchRows(bs, ds.Nodes)}
	s.BatchBytes = s.BatchRows * int64(ds.FeatureDim) * featureValueBytes
	if tb.Kind == KindThisHost {
		s.Epochs = 0
		s.EpochsRule = "this host as it is: the run's own epochs"
		return s, nil
	}
	s.Emulated = true
	paperFeat := tb.Dataset.FeatureBytes.V()
	var paperBatch float64 // the paper's M_b in bytes, 0 when unknown
	if fo := tb.Run.Fanout.Value; len(fo) > 0 {
		nodes := int64(tb.Dataset.Nodes.V())
		paperBatch = float64(BatchRows(BatchShape{Batch: int(tb.Run.Batch.V()), Fanout: fo}, nodes)) * tb.Dataset.FeatureDim.V() * featureValueBytes
	}
	mem := func(what string, paper float64, src string) Memory {
		m := Memory{PaperBytes: int64(paper), Share: paper / paperFeat}
		m.ShareBytes = int64(math.Round(m.Share * float64(s.FeatureBytes)))
		m.Rule = fmt.Sprintf("%s %s = %.1f %% of the paper's %s of features (%s) → %s here",
			what, units.Bytes(int64(paper)), 100*m.Share, units.Bytes(int64(paperFeat)), src, units.Bytes(m.ShareBytes))
		if paperBatch > 0 {
			m.Batches = paper / paperBatch
			m.BatchBytes = int64(math.Round(m.Batches * float64(s.BatchBytes)))
			m.Rule += fmt.Sprintf("; in mini-batches %.1f of the paper's M_b (%s) → %s here", m.Batches, units.Bytes(int64(paperBatch)), units.Bytes(m.BatchBytes))
		} else {
			m.Rule += "; in mini-batches: not derivable (" + tb.Run.Fanout.Missing + ")"
		}
		return m
	}
	s.Host = mem("host memory", tb.Host.MemoryLimitBytes.V(), tb.Host.MemoryLimitBytes.Source)
	if b := tb.Run.DeviceBudgetBytes; b.Known() {
		s.Device = mem("device budget", b.V(), b.Source)
	} else {
		s.Device = mem("device memory", tb.GPU.MemoryBytes.V(), tb.GPU.MemoryBytes.Source)
	}

	switch th, co := tb.Host.Threads, tb.Host.Cores; {
	case th.Known():
		s.IODepth = int(th.V())
		s.IODepthRule = fmt.Sprintf("thread-per-request reads: the paper host's %d threads (%s), %s", s.IODepth, th.Source, depthEmulation(s.IODepth))
	case co.Known():
		s.IODepth = 2 * int(co.V())
		s.IODepthRule = fmt.Sprintf("thread-per-request reads: the paper host's threads are not published (%s); twice its %d cores (%s), as Ginex §5.1 and GNNDrive §5 set their I/O threads, %s", th.Missing, int(co.V()), co.Source, depthEmulation(s.IODepth))
	default:
		s.IODepthRule = "thread-per-request reads: not derivable, the paper host's threads and cores are not published (" + th.Missing + "); the run keeps its own concurrency"
	}

	s.AccelProfile = tb.GPU.AccelProfile
	s.AccelDerived = s.AccelProfile != MeasuredAccelProfile
	if s.AccelDerived {
		s.AccelRule = fmt.Sprintf("the paper's %s as accelerator profile %s: derived from the measured %s by the spec-sheet ratios of DESIGN §13, not measured", tb.GPU.Model.Value, s.AccelProfile, MeasuredAccelProfile)
	} else {
		s.AccelRule = fmt.Sprintf("the paper's %s as the measured accelerator profile %s", tb.GPU.Model.Value, s.AccelProfile)
	}

	n := tb.SSD.Count.V()
	if !tb.SSD.Count.Known() {
		n = 1
	}
	switch iops, seq := tb.SSD.RandReadIOPS, tb.SSD.SeqReadBytesPerS; {
	case iops.Known() && st.RandReadIOPS > 0:
		s.Dilation = n * iops.V() / st.RandReadIOPS
		s.DilationRule = fmt.Sprintf("step × %.3g: the paper's %g × %s at %.0f random-read IOPS (%s) over this host's %.0f (%s)", s.Dilation, n, tb.SSD.Model.Value, iops.V(), iops.Source, st.RandReadIOPS, st.Source)
	case seq.Known() && st.SeqBytesPerS > 0:
		s.Dilation = n * seq.V() / st.SeqBytesPerS
		s.DilationRule = fmt.Sprintf("step × %.3g: the paper SSD's random-read IOPS are not published (%s); its %g × %s sequential (%s) over this host's %s/s (%s)", s.Dilation, iops.Missing, n, units.Bytes(int64(seq.V())), seq.Source, units.Bytes(int64(st.SeqBytesPerS)), st.Source)
	case !iops.Known() && !seq.Known():
		s.DilationRule = fmt.Sprintf("not derivable: %s's figures are not published (%s); the step is not dilated", tb.SSD.Model.Value, iops.Missing)
	default:
		s.DilationRule = "not derivable: this host's storage is not measured (run `outcore bench device`); the step is not dilated"
	}

	if e := tb.Run.Epochs; e.Known() {
		s.Epochs = max(MinEpochs, int(e.V()))
		s.EpochsRule = fmt.Sprintf("%d epochs: the paper's %d (%s), at least %d; the first %d cold, reported apart", s.Epochs, int(e.V()), e.Source, MinEpochs, ColdEpochs)
	} else {
		s.Epochs = MinEpochs
		s.EpochsRule = fmt.Sprintf("%d epochs: the paper's count is not published (%s); the first %d cold, reported apart", MinEpochs, e.Missing, ColdEpochs)
	}
	return s, nil
}

// depthEmulation says how a thread-per-request system's I/O depth n is
// emulated here (DESIGN §13, "How a run applies the mapping").
func depthEmulation(n int) string {
	return fmt.Sprintf("as I/O depth %d (ginex: its feature gathers through an io_uring queue of depth %d; pyg+: %d gather threads, one page fault in flight each)", n, n, n)
}

// For is the run's memory under a system's governing units: the host
// memory limit and device memory in bytes, and the rule's words.
func (s Settings) For(system string) (host, device int64, rule string) {
	if !s.Emulated {
		return 0, 0, "this host as it is: the run's own memory limits"
	}
	hu, du := GoverningUnits(system)
	host, device = s.Host.Bytes(hu), s.Device.Bytes(du)
	return host, device, fmt.Sprintf("%s: host memory by %s (%s), device memory by %s (%s)", system, hu, units.Bytes(host), du, units.Bytes(device))
}

// Deviations are the lines a run on this testbed records among its
// deviations (for system; thread-per-request systems carry the I/O depth).
func (s Settings) Deviations(system string) []string {
	if !s.Emulated {
		return nil
	}
	_, _, mem := s.For(system)
	out := []string{
		"testbed " + s.Testbed + ": " + mem,
		"testbed " + s.Testbed + ": " + s.Host.Rule,
		"testbed " + s.Testbed + ": " + s.Device.Rule,
	}
	if ThreadPerRequest(system) {
		out = append(out, "testbed "+s.Testbed+": "+s.IODepthRule)
	}
	out = append(out, "testbed "+s.Testbed+": "+s.AccelRule, "testbed "+s.Testbed+": "+s.DilationRule, "testbed "+s.Testbed+": "+s.EpochsRule)
	return out
}
