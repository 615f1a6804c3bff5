package dataset

import (
	"context"
	"testing"
)

// BenchmarkGenerateBlocks measures the generator's CPU side alone (one
// goroutine, no I/O): bytes are feature bytes produced.
func BenchmarkGenerateBlocks(b *testing.B) {
	cfg, _ := Preset("medium")
	cfg = cfg.resolved()
	g := newGenerator(cfg)
	var blk genBlock
	b.SetBytes(g.blockNodes * int64(cfg.FeatureDim) * 4)
	b.ResetTimer()
	cpu0 := cpuSeconds()
	for i := 0; i < b.N; i++ {
		start := (int64(i) * g.blockNodes) % (cfg.Nodes - g.blockNodes)
		g.fill(&blk, start, g.blockNodes)
	}
	reportPerCPU(b, float64(b.N*int(g.blockNodes)*cfg.FeatureDim*4), cpuSeconds()-cpu0)
}

// reportPerCPU adds feature MB per CPU-second (user+system of the whole
// process), a throughput that other load on the machine barely changes.
func reportPerCPU(b *testing.B, bytes, cpu float64) {
	if cpu > 0 {
		b.ReportMetric(bytes/1e6/cpu, "MB/cpu-s")
	}
}

// BenchmarkGenerate writes a 64 MiB-feature dataset (medium's shape, fewer
// nodes) end to end: generation, writes, fsync, verification, rename.
func BenchmarkGenerate(b *testing.B) {
	cfg, _ := Preset("medium")
	cfg.Nodes = 1 << 17
	b.SetBytes(cfg.Nodes * int64(cfg.FeatureDim) * 4)
	dir := b.TempDir()
	cpu0 := cpuSeconds()
	for i := 0; i < b.N; i++ {
		if _, err := GenerateWith(context.Background(), dir, "bench", cfg, GenOptions{Force: true, NoIndptr: true}); err != nil {
			b.Fatal(err)
		}
	}
	reportPerCPU(b, float64(b.N)*float64(cfg.Nodes*int64(cfg.FeatureDim)*4), cpuSeconds()-cpu0)
}
