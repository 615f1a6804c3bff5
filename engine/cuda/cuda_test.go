//go:build cgo

package cuda

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"outcore/engine/graph"
	"outcore/engine/nn"
	"outcore/engine/nn/nntest"
)

// openOrSkip returns the GPU or skips the test saying why there is none.
func openOrSkip(t testing.TB) *Device {
	t.Helper()
	d, err := Open()
	if err != nil {
		if errors.Is(err, ErrUnavailable) {
			t.Skipf("no GPU: %v", err)
		}
		t.Fatal(err)
	}
	t.Logf("GPU %s (compute %d.%d, driver %d, NVRTC %d.%d, %d MiB)", d.Name, d.CC[0], d.CC[1], d.DriverVer,
		d.NVRTCVersion[0], d.NVRTCVersion[1], d.MemTotal>>20)
	return d
}

// TestKernelsCompile compiles kernels.cu with NVRTC for Hopper and Ampere
// wherever NVRTC is installed (no GPU needed).
func TestKernelsCompile(t *testing.T) {
	for _, cc := range [][2]int{{9, 0}, {8, 0}} {
		v, n, err := CheckKernels(cc)
		if errors.Is(err, ErrUnavailable) {
			t.Skipf("NVRTC not installed: %v", err)
		}
		if err != nil {
			t.Fatalf("compute_%d%d: %v", cc[0], cc[1], err)
		}
		if n < 1000 {
			t.Fatalf("compute_%d%d: PTX of %d bytes", cc[0], cc[1], n)
		}
		t.Logf("NVRTC %d.%d: compute_%d%d PTX %d bytes", v[0], v[1], cc[0], cc[1], n)
	}
}

// TestOpenWithoutGPU: Open either finds a GPU or fails with ErrUnavailable
// and a reason; it never crashes.
func TestOpenWithoutGPU(t *testing.T) {
	d, err := Open()
	if err != nil {
		if !errors.Is(err, ErrUnavailable) || len(err.Error()) < len(ErrUnavailable.Error())+5 {
			t.Fatalf("Open: %v (want ErrUnavailable with a reason)", err)
		}
		return
	}
	if d.Name == "" || d.CC[0] < 3 {
		t.Fatalf("device %+v", d)
	}
}

// randomBlocks samples a batch as a uniform neighbour sampler would on a
// random graph of n nodes (nntest.SampledBlocks), with ragged rows: one row
// in seven has 0–2 neighbours (ragged rows, empty rows).
func randomBlocks(rng *rand.Rand, n, batch int, fanouts []int) []graph.Block {
	return nntest.SampledBlocks(rng, n, batch, fanouts, true)
}

func mustModel(t testing.TB, kind string) *nn.Model {
	m, err := nn.NewModel(kind, 8, 8, 3, 2, 2, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func randX(rng *rand.Rand, rows, cols int) *nn.Tensor {
	x := nn.NewTensor(rows, cols)
	for i := range x.Data {
		x.Data[i] = float32(rng.NormFloat64())
	}
	return x
}

func randLabels(rng *rand.Rand, n, classes int) []int32 {
	y := make([]int32, n)
	for i := range y {
		y[i] = int32(rng.IntN(classes))
		if i%11 == 5 {
			y[i] = -1 // ignored rows
		}
	}
	return y
}

// TestModelMatchesCPU: the GPU model and engine/nn's CPU model, from the
// same weights, give the same losses on the same batches (first steps,
// dropout on) and the same weights and logits after them, within float
// rounding; for sage, gcn and gat (4 heads).
func TestModelMatchesCPU(t *testing.T) {
	d := openOrSkip(t)
	for _, kind := range []string{nn.KindSAGE, nn.KindGCN, nn.KindGAT} {
		t.Run(kind, func(t *testing.T) { matchCPU(t, d, kind) })
	}
}

func matchCPU(t *testing.T, d *Device, kind string) {
	rng := rand.New(rand.NewPCG(7, 7))
	const in, hidden, classes = 48, 64, 7
	cpu, err := nn.NewModel(kind, in, hidden, classes, 3, 4, 0.5, 3)
	if err != nil {
		t.Fatal(err)
	}
	cpu.Opt.WeightDecay = 5e-4
	gpu, err := NewModel(d, cpu)
	if err != nil {
		t.Fatal(err)
	}
	defer gpu.Close()
	for step := 0; step < 5; step++ {
		blocks := randomBlocks(rng, 5000, 64, []int{5, 4, 3})
		x := randX(rng, blocks[0].NumSrc, in)
		y := randLabels(rng, 64, classes)
		lg, ag, err := gpu.Step(blocks, x, y)
		if err != nil {
			t.Fatal(err)
		}
		lc, ac := cpu.Step(blocks, x, y)
		t.Logf("step %d: loss gpu %.7f cpu %.7f, acc gpu %.3f cpu %.3f", step, lg, lc, ag, ac)
		if math.Abs(float64(lg-lc)) > 1e-4*math.Max(1, math.Abs(float64(lc))) || math.IsNaN(float64(lg)) {
			t.Fatalf("step %d: loss gpu %v cpu %v", step, lg, lc)
		}
		if ag != ac {
			t.Errorf("step %d: accuracy gpu %v cpu %v", step, ag, ac)
		}
	}
	// weights after the steps
	back, _ := nn.NewModel(kind, in, hidden, classes, 3, 4, 0.5, 99)
	if err := gpu.CopyTo(back); err != nil {
		t.Fatal(err)
	}
	var maxd float64
	cp, gp := cpu.Params(), back.Params()
	for i := range cp {
		for j := range cp[i].Value.Data {
			maxd = math.Max(maxd, math.Abs(float64(cp[i].Value.Data[j]-gp[i].Value.Data[j])))
		}
	}
	t.Logf("max |w_gpu - w_cpu| after 5 steps: %.2e", maxd)
	if maxd > 1e-3 {
		t.Fatalf("weights differ by %v after 5 steps", maxd)
	}
	// inference equals too
	blocks := randomBlocks(rng, 5000, 64, []int{5, 4, 3})
	x := randX(rng, blocks[0].NumSrc, in)
	lgts, err := gpu.Infer(blocks, x)
	if err != nil {
		t.Fatal(err)
	}
	ref := cpu.Infer(blocks, x)
	for i := range ref.Data {
		if math.Abs(float64(ref.Data[i]-lgts.Data[i])) > 1e-3 {
			t.Fatalf("logit %d: gpu %v cpu %v", i, lgts.Data[i], ref.Data[i])
		}
	}
}

// TestSAGEBadInput: malformed blocks and features are errors, not crashes.
func TestSAGEBadInput(t *testing.T) {
	d := openOrSkip(t)
	stepped := mustModel(t, nn.KindGCN)
	rng0 := rand.New(rand.NewPCG(3, 3))
	bl := randomBlocks(rng0, 100, 4, []int{2, 2})
	stepped.Step(bl, randX(rng0, bl[0].NumSrc, 8), []int32{0, 1, 2, 0})
	if _, err := NewModel(d, stepped); err == nil {
		t.Fatal("a model that has stepped: no error (its Adam state is not copied)")
	}
	cpu := mustModel(t, nn.KindSAGE)
	gpu, err := NewModel(d, cpu)
	if err != nil {
		t.Fatal(err)
	}
	defer gpu.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	blocks := randomBlocks(rng, 100, 4, []int{2, 2})
	x := randX(rng, blocks[0].NumSrc, 8)
	if _, _, err := gpu.Step(blocks[:1], x, make([]int32, 4)); err == nil {
		t.Fatal("one block for two layers: no error")
	}
	if _, _, err := gpu.Step(blocks, randX(rng, 3, 8), make([]int32, 4)); err == nil {
		t.Fatal("wrong feature rows: no error")
	}
	bad := append([]graph.Block{}, blocks...)
	bad[1].Indices = append([]int32{}, bad[1].Indices...)
	bad[1].Indices[0] = int32(bad[1].NumSrc)
	if _, _, err := gpu.Step(bad, x, make([]int32, 4)); err == nil {
		t.Fatal("source id out of range: no error")
	}
	if _, _, err := gpu.Step(blocks, x, []int32{0, 1, 2, 3}); err == nil {
		t.Fatal("label 3 of 3 classes: no error")
	}
}

// TestSAGEStepTime times one GraphSAGE step of docs/benchmarks/nn.md's
// shape (1000 seeds, 10,10,10 from 2.4M nodes, 128 → 256 → 256 → 47) on
// the GPU and, with OUTCORE_GPU_CPU_STEP=1, the CPU trainer on the same
// batch. Set OUTCORE_GPU_STEP=1 (docs/benchmarks/gpu.md);
// OUTCORE_GPU_STEP_DUMP=DIR also writes the batch for
// scripts/pyg_same_batch.py.
func TestSAGEStepTime(t *testing.T) {
	if os.Getenv("OUTCORE_GPU_STEP") == "" {
		t.Skip("set OUTCORE_GPU_STEP=1 to time one SAGE step on the GPU")
	}
	d := openOrSkip(t)
	rng := rand.New(rand.NewPCG(2, 2))
	blocks := nntest.SampledBlocks(rng, 2_400_000, 1000, []int{10, 10, 10}, false)
	x := randX(rng, blocks[0].NumSrc, 128)
	y := make([]int32, 1000)
	for i := range y {
		y[i] = int32(rng.IntN(47))
	}
	cpu, _ := nn.NewModel(nn.KindSAGE, 128, 256, 47, 3, 1, 0.5, 1)
	gpu, err := NewModel(d, cpu)
	if err != nil {
		t.Fatal(err)
	}
	defer gpu.Close()
	for i := 0; i < 3; i++ {
		if _, _, err := gpu.Step(blocks, x, y); err != nil {
			t.Fatal(err)
		}
	}
	if dir := os.Getenv("OUTCORE_GPU_STEP_DUMP"); dir != "" {
		if err := dumpBatch(dir, blocks, x.Data, x.Rows, x.Cols, y); err != nil {
			t.Fatal(err)
		}
	}
	const reps = 10
	steps := make([]time.Duration, reps)
	h2d := make([]time.Duration, reps)    // pageable: cuMemcpyHtoD from Go memory
	staged := make([]time.Duration, reps) // pinned staging (staging.go), as the step copies
	// timeCopy times one copy of the features and the wait for it
	timeCopy := func(put func(Buf, []float32) error) time.Duration {
		t0 := time.Now()
		if err := put(gpu.x, x.Data); err != nil {
			t.Fatal(err)
		}
		if err := d.Sync(); err != nil {
			t.Fatal(err)
		}
		return time.Since(t0)
	}
	for i := range steps {
		h2d[i] = timeCopy(d.PutF32)
		staged[i] = timeCopy(d.PutF32Staged)
		t0 := time.Now()
		if _, _, err := gpu.Step(blocks, x, y); err != nil {
			t.Fatal(err)
		}
		steps[i] = time.Since(t0)
	}
	t.Logf("GPU SAGE step, %d input rows (%d MB), edges %d/%d/%d: median %v (min %v max %v) incl. the features' staged copy; the copy alone: staged through pinned memory median %v (min %v), pageable median %v (min %v); step minus staged copy %v",
		blocks[0].NumSrc, len(x.Data)*4/1_000_000, len(blocks[0].Indices), len(blocks[1].Indices), len(blocks[2].Indices),
		median(steps), minD(steps), maxD(steps), median(staged), minD(staged), median(h2d), minD(h2d), median(steps)-median(staged))
	if os.Getenv("OUTCORE_GPU_CPU_STEP") != "" {
		for i := 0; i < 2; i++ {
			cpu.Step(blocks, x, y)
		}
		cs := make([]time.Duration, 5)
		for i := range cs {
			t0 := time.Now()
			cpu.Step(blocks, x, y)
			cs[i] = time.Since(t0)
		}
		t.Logf("CPU SAGE step (engine/nn, this host): median %v (min %v max %v)", median(cs), minD(cs), maxD(cs))
	}
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration{}, d...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s[len(s)/2]
}

func minD(d []time.Duration) time.Duration {
	m := d[0]
	for _, v := range d {
		m = min(m, v)
	}
	return m
}

func maxD(d []time.Duration) time.Duration {
	m := d[0]
	for _, v := range d {
		m = max(m, v)
	}
	return m
}
