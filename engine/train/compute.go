package train

// The compute modes (DESIGN §10): what consumes each ready batch that a
// variant hands to Env.TrainStep. In "cpu" the trainer trains it; in
// "none" the consumer checksums the batch's feature rows (every row
// delivered is read, so no read can be skipped) and releases it; in
// "model:PROFILE" it holds the batch for the step time the accelerator
// profile gives for the batch's shape, asleep (no CPU), as a GPU would
// hold it while the host samples and reads the next ones. Every variant
// passes through here, so every variant has the three modes.

import (
	"fmt"
	"hash/crc32"
	"time"

	"outcore/engine/accel"
	"outcore/engine/graph"
	"outcore/engine/metrics"
	"outcore/engine/nn"
	"outcore/internal/osutil"
)

// Counters of the consumer in none and model modes (EpochRecord.Counters).
const (
	// CounterDeliveredRows is the feature rows handed to the consumer.
	CounterDeliveredRows = "delivered_rows"
	// CounterDeliveredChecksum is the sum over the epoch's batches of
	// each batch's CRC-32C of its feature rows in input order ("none"
	// only): equal for two runs that delivered the same rows to the same
	// batches, whatever the batches' order.
	CounterDeliveredChecksum = "delivered_checksum"
	// CounterConsumerCPU is the consumer's CPU time in microseconds,
	// measured on its thread (near zero in model mode: it sleeps).
	CounterConsumerCPU = "consumer_cpu_us"
)

// DilatedStep is the modelled step time d multiplied by the config's
// step dilation (0 or 1: d itself), DESIGN §13.
func DilatedStep(d time.Duration, dilation float64) time.Duration {
	if dilation <= 0 || dilation == 1 {
		return d
	}
	return time.Duration(float64(d) * dilation)
}

// computeDeviation is the deviation a run in mode records (none for cpu).
func computeDeviation(m accel.Mode, p *accel.Profile, dilation float64) string {
	switch m.Kind {
	case accel.ComputeNone:
		return "compute none: no model is trained; each batch's feature rows are delivered to the consumer, checksummed and released (the loader alone); loss and accuracy are n/a"
	case accel.ComputeModel:
		d := fmt.Sprintf("compute %s: no model is trained on the CPU; the consumer holds each batch, asleep, for the step time that %s gives for its shape (input rows, edges and nodes per layer, dimensions, model); loss and accuracy are n/a",
			m, p.Describe())
		if dilation > 0 && dilation != 1 {
			d += fmt.Sprintf("; the step time is dilated × %.3g (step_dilation)", dilation)
		}
		return d
	}
	return ""
}

// TrainsModel reports whether the run trains a model on its trainer (the
// compute mode cpu). In none and model: modes no model step runs: nothing
// is profiled, reserved or held outside the budget for one.
func (e *Env) TrainsModel() bool { return e.compute.Trains() }

// StepShape is the accelerator's view of one training step of mb.
func (e *Env) StepShape(mb *graph.MiniBatch) accel.StepShape {
	c := e.Config
	s := accel.StepShape{Model: c.Model, InDim: e.Dataset.Meta.FeatureDim, Hidden: c.Hidden, Classes: e.Dataset.Meta.Classes,
		Rows: int64(len(mb.InputNodes)), Seeds: int64(len(mb.Seeds))}
	if c.Model == "gat" {
		s.Heads = c.Heads
	}
	for _, b := range mb.Blocks {
		s.Layers = append(s.Layers, accel.Layer{Src: int64(b.NumSrc), Dst: int64(b.NumDst), Edges: int64(len(b.Indices))})
	}
	return s
}

// consume is TrainStep's consumer in none and model modes: x or xi holds
// the batch's feature rows. It records train_s (the consumer's time),
// the batch as done without loss or accuracy, and progress.
func (e *Env) consume(ep *metrics.EpochStats, mb *graph.MiniBatch, x *nn.Tensor, xi *nn.Indexed) (StepResult, error) {
	rows, cols := len(mb.InputNodes), e.Dataset.Meta.FeatureDim
	if x != nil && (x.Rows < rows || x.Cols != cols || len(x.Data) < rows*cols) {
		return StepResult{}, fmt.Errorf("batch %d: features %d×%d, want %d input nodes × %d", mb.Index, x.Rows, x.Cols, rows, cols)
	}
	if xi != nil {
		if xi.Rows() != rows || xi.Cols != cols {
			return StepResult{}, fmt.Errorf("batch %d: indexed features %d×%d, want %d input nodes × %d", mb.Index, xi.Rows(), xi.Cols, rows, cols)
		}
		if err := xi.Check(); err != nil {
			return StepResult{}, fmt.Errorf("batch %d: %w", mb.Index, err)
		}
	}
	t0 := time.Now()
	meter := metrics.StartThreadMeter()
	switch e.compute.Kind {
	case accel.ComputeNone:
		var h uint32
		if x != nil {
			h = crc32.Update(0, castagnoli, osutil.Bytes(x.Data[:rows*cols]))
		} else {
			for i := 0; i < rows; i++ {
				h = crc32.Update(h, castagnoli, osutil.Bytes(xi.Row(i)))
			}
		}
		ep.Count(CounterDeliveredChecksum, int64(h))
	case accel.ComputeModel:
		time.Sleep(DilatedStep(e.profile.StepTime(e.StepShape(mb)), e.Config.StepDilation))
	}
	if xi != nil && xi.Consumed != nil {
		xi.Consumed()
	}
	_, cpu, _ := meter.Stop()
	ep.Add(metrics.StageTrain, time.Since(t0))
	ep.Count(CounterConsumerCPU, cpu.Microseconds())
	ep.Count(CounterDeliveredRows, int64(rows))
	ep.BatchDone(0, 0, 0)
	e.Progress(mb.Epoch, ep.Batches(), e.NumBatches(), "train")
	return StepResult{}, nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)
