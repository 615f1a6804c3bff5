package mariusgnn

import (
	"strings"
	"testing"
)

func TestEdgeBound(t *testing.T) {
	// 3 partitions, buckets 1..9: k resident partitions hold at most the
	// k² largest buckets
	b := edgeBound([]int64{1, 2, 3, 4, 5, 6, 7, 8, 9}, 3)
	want := []int64{0, 9, 9 + 8 + 7 + 6, 45}
	for k, w := range want {
		if b[k] != w {
			t.Fatalf("bound[%d] = %d, want %d", k, b[k], w)
		}
	}
}

func TestBufferCapacity(t *testing.T) {
	const MiB = 1 << 20
	base := SizeInput{
		Base: 100 * MiB, Reserve: 10 * MiB, PerBatch: 20 * MiB,
		RowBytes: 512, PartSize: 2048, P: 16, MinC: 1, // 1 MiB of rows per partition
	}
	withEdges := base
	withEdges.Buckets = make([]int64, 16*16)
	for i := range withEdges.Buckets {
		withEdges.Buckets[i] = 1 << 14 // 128 KiB per bucket
	}
	spare := base
	spare.Spare = true
	seq := base
	seq.MinC = 5
	cases := []struct {
		name   string
		in     SizeInput
		budget int64
		c      int
		err    string
	}{
		{"unlimited holds every partition", base, 0, 16, ""},
		{"room for 10", base, 140 * MiB, 10, ""},
		{"room for all", base, 1 << 40, 16, ""},
		{"exactly one", base, 131 * MiB, 1, ""},
		{"below one", base, 130 * MiB, 0, "131 MiB"},
		// c partitions hold c² buckets of 128 KiB and their subgraph 64 KiB
		// per bucket: 130 + c + 3c²/16 MiB, 139.7 MiB for 5, 142.75 for 6
		{"edges count", withEdges, 140 * MiB, 5, ""},
		{"spare slot", spare, 140 * MiB, 9, ""},
		{"sequential floor", seq, 134 * MiB, 0, "at least"},
		{"sequential fits", seq, 135 * MiB, 5, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := c.in
			in.Budget = c.budget
			got, need, err := BufferCapacity(in)
			if c.err != "" {
				if err == nil {
					t.Fatalf("capacity %d accepted (need %d)", got, need)
				}
				if c.err != "at least" && !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %q does not name %s", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != c.c {
				t.Fatalf("capacity %d, want %d (need %d MiB)", got, c.c, need>>20)
			}
			if c.budget > 0 && need > c.budget {
				t.Fatalf("need %d over budget %d", need, c.budget)
			}
			if c.budget > 0 && got < in.P {
				bound := edgeBound(in.Buckets, in.P+1)
				if NeedBytes(in, got+1, bound) <= c.budget {
					t.Fatalf("capacity %d is not the largest that fits", got)
				}
			}
		})
	}
	if _, _, err := BufferCapacity(SizeInput{P: 4, PartSize: 1, RowBytes: 4, MinC: 5}); err == nil {
		t.Fatal("a floor above p accepted")
	}
}

func TestMinBudget(t *testing.T) {
	if got := MinBudget(1000, 512, 100, 3); got != 1000+3*512*100 {
		t.Fatalf("MinBudget = %d", got)
	}
	if got := MinBudget(0, 4, 10, 0); got != 40 {
		t.Fatalf("MinBudget with no floor = %d, want one partition", got)
	}
}
