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
	for i := 0; i < b.N; i++ {
		start := (int64(i) * g.blockNodes) % (cfg.Nodes - g.blockNodes)
		g.fill(&blk, start, g.blockNodes)
	}
}

// BenchmarkGenerate writes a 64 MiB-feature dataset (medium's shape, fewer
// nodes) end to end: generation, writes, fsync, verification, rename.
func BenchmarkGenerate(b *testing.B) {
	cfg, _ := Preset("medium")
	cfg.Nodes = 1 << 17
	b.SetBytes(cfg.Nodes * int64(cfg.FeatureDim) * 4)
	dir := b.TempDir()
	for i := 0; i < b.N; i++ {
		if _, err := GenerateWith(context.Background(), dir, "bench", cfg, GenOptions{Force: true, NoIndptr: true}); err != nil {
			b.Fatal(err)
		}
	}
}
