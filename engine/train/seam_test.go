package train

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"outcore/engine/graph"
	"outcore/engine/metrics"
	"outcore/engine/nn"
	"outcore/engine/sample"
	"outcore/engine/storage"
	"outcore/engine/vocab"
)

// pipelined is a test variant built only on the seam: two sampling+gathering
// workers (cloned samplers, own storage readers, indices read through
// storage) feed the trainer through a channel, so batches arrive out of
// order, as in GNNDrive.
type pipelined struct {
	cfg       Config
	closeTopo func() error
	feats     *storage.File
	s         *sample.Sampler
	seenOrder [][]int
	failAt    int // epoch whose RunEpoch fails (-1 none)
	cancel    context.CancelFunc
}

func (p *pipelined) Name() string { return "test-pipelined" }
func (p *pipelined) Devices() map[string]string {
	return map[string]string{"sample": "cpu", "extract": "cpu", "train": "cpu"}
}
func (p *pipelined) Deviations() []string { return []string{"test variant"} }

func (p *pipelined) Prepare(ctx context.Context, env *Env) error {
	t0 := time.Now()
	topo, closeTopo, err := env.Topology("storage")
	if err != nil {
		return err
	}
	p.closeTopo = closeTopo
	if p.s, err = env.NewSampler(topo); err != nil {
		return err
	}
	if p.feats, err = env.OpenFeatures(); err != nil {
		return err
	}
	env.PrepareStage("inspect_s", time.Since(t0))
	return nil
}

type ready struct {
	mb *graph.MiniBatch
	x  *nn.Tensor
}

func (p *pipelined) RunEpoch(ctx context.Context, env *Env, epoch int, ep *metrics.EpochStats) error {
	if epoch == p.failAt {
		return errors.New("injected failure")
	}
	if p.cancel != nil && epoch == 1 {
		p.cancel()
		return ctx.Err()
	}
	batches := env.EpochBatches(epoch)
	ch := make(chan ready, 2)
	errc := make(chan error, 2)
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(w int, s *sample.Sampler) {
			defer wg.Done()
			g, err := NewGatherer(p.feats, env.Dataset.Meta.FeatureDim)
			if err != nil {
				errc <- err
				return
			}
			defer g.Close()
			// Worker 1 walks its share backwards so arrival order differs.
			var mine []int
			for i := w; i < len(batches); i += 2 {
				mine = append(mine, i)
			}
			if w == 1 {
				slices.Reverse(mine)
			}
			for _, i := range mine {
				t0 := time.Now()
				mb, err := s.Sample(epoch, i, batches[i])
				if err != nil {
					errc <- err
					return
				}
				ep.Add(metrics.StageSample, time.Since(t0))
				x := &nn.Tensor{}
				if err := env.Gather(ctx, ep, g, mb, x); err != nil {
					errc <- err
					return
				}
				ch <- ready{mb, x}
			}
		}(w, p.s.Clone())
	}
	go func() { wg.Wait(); close(ch) }()
	var order []int
	for {
		t0 := time.Now()
		r, ok := <-ch
		ep.Add(metrics.StageStall, time.Since(t0))
		if !ok {
			break
		}
		order = append(order, r.mb.Index)
		if _, err := env.TrainStep(ep, r.mb, r.x); err != nil {
			return err
		}
	}
	select {
	case err := <-errc:
		return err
	default:
	}
	ep.Count("reordered", int64(len(order)))
	p.seenOrder = append(p.seenOrder, order)
	return nil
}

func (p *pipelined) Close() error {
	var errs []error
	if p.feats != nil {
		errs = append(errs, p.feats.Close())
	}
	if p.closeTopo != nil {
		errs = append(errs, p.closeTopo())
	}
	return errors.Join(errs...)
}

// testOptions are the options of the test variants.
var testOptions = []Option{{Key: "tag", Type: OptString, Help: "names the instance in testSys"}}

var (
	testSys   = map[string]*pipelined{}
	testSysMu sync.Mutex
)

func init() {
	RegisterVariant(Variant{Variant: vocab.Variant{Name: "test-pipelined", Options: testOptions}, New: func(cfg Config) (System, error) {
		p := &pipelined{cfg: cfg, failAt: -1}
		testSysMu.Lock()
		testSys[cfg.Dataset+"/"+cfg.Options["tag"]] = p
		testSysMu.Unlock()
		return p, nil
	}})
}

func TestSeamOutOfOrderPipeline(t *testing.T) {
	genDataset(t, "t3k", nil)
	cfg := testConfig("t3k")
	cfg.System = "test-pipelined"
	cfg.Batch = 64
	cfg.Options = map[string]string{"tag": "ooo"}
	var out bytes.Buffer
	if _, err := Run(context.Background(), cfg, &out, nil); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	r := parseRecords(t, out.Bytes())
	if !slices.Equal(r.start.Deviations, []string{"test variant"}) {
		t.Fatalf("deviations %v", r.start.Deviations)
	}
	if r.summary.PrepareStages["inspect_s"] <= 0 {
		t.Fatalf("prepare stages %v", r.summary.PrepareStages)
	}
	p := testSys["t3k/ooo"]
	for _, e := range r.epochs {
		order := p.seenOrder[e.Epoch]
		if e.Batches != len(order) || e.Counters["reordered"] != int64(len(order)) {
			t.Fatalf("epoch %d: %d batches, order %d, counters %v", e.Epoch, e.Batches, len(order), e.Counters)
		}
		sorted := slices.Clone(order)
		slices.Sort(sorted)
		for i, v := range sorted {
			if v != i {
				t.Fatalf("epoch %d trained batches %v, want each of 0..%d once", e.Epoch, order, len(order)-1)
			}
		}
		if slices.IsSorted(order) {
			t.Logf("epoch %d happened to arrive in order", e.Epoch)
		}
	}
	for _, l := range r.logs {
		if strings.Contains(l.Msg, "trained") && strings.Contains(l.Msg, "batches") {
			t.Fatalf("runner warned about batch count: %s", l.Msg)
		}
	}
	if r.summary.BestValAcc < 0.5 {
		t.Fatalf("out-of-order training did not learn: %+v", r.summary)
	}
}

func TestRunFailureAndCancel(t *testing.T) {
	genDataset(t, "t3k", nil)
	cfg := testConfig("t3k")
	cfg.System = "test-pipelined"
	cfg.Options = map[string]string{"tag": "fail"}
	// Fail in epoch 1: summary failed, with the error, after one epoch record.
	RegisterVariant(Variant{Variant: vocab.Variant{Name: "test-fail", Options: testOptions}, New: func(c Config) (System, error) {
		return &pipelined{cfg: c, failAt: 1}, nil
	}})
	cfg.System = "test-fail"
	var out bytes.Buffer
	_, err := Run(context.Background(), cfg, &out, nil)
	if err == nil || !strings.Contains(err.Error(), "injected failure") {
		t.Fatalf("err %v", err)
	}
	r := parseRecords(t, out.Bytes())
	if r.summary.Outcome != metrics.OutcomeFailed || !strings.Contains(r.summary.Error, "injected failure") || len(r.epochs) != 1 {
		t.Fatalf("summary %+v, %d epochs", r.summary, len(r.epochs))
	}
	// Cancel during epoch 1: summary cancelled.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	RegisterVariant(Variant{Variant: vocab.Variant{Name: "test-cancel", Options: testOptions}, New: func(c Config) (System, error) {
		return &pipelined{cfg: c, failAt: -1, cancel: cancel}, nil
	}})
	cfg.System = "test-cancel"
	out.Reset()
	if _, err := Run(ctx, cfg, &out, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	r = parseRecords(t, out.Bytes())
	if r.summary.Outcome != metrics.OutcomeCancelled {
		t.Fatalf("summary %+v", r.summary)
	}
	// A config error is reported as a failed summary naming the field.
	cfg.System = "reference"
	cfg.Options = nil
	cfg.Hidden = -1
	out.Reset()
	if _, err := Run(context.Background(), cfg, &out, nil); !errors.Is(err, ErrConfig) {
		t.Fatalf("err %v", err)
	}
	r = parseRecords(t, out.Bytes())
	if r.summary.Outcome != metrics.OutcomeFailed || !strings.Contains(r.summary.Error, "hidden") {
		t.Fatalf("summary %+v", r.summary)
	}
}
