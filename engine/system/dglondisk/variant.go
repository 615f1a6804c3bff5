package dglondisk

import (
	"fmt"

	"outcore/engine/system/kit"
	"outcore/engine/train"
	"outcore/engine/vocab"
)

// Name is the registered name of the DGL-OnDisk variant, the paper's
// label lowercased; paper and summary are its lines in the registry.
const (
	Name    = "dgl-ondisk"
	paper   = "DGL-OnDisk, the baseline of DiskGNN (arXiv:2405.05231) §7.1"
	summary = "DGL's loop with every node feature read from disk by pread, no feature cache"
)

func init() {
	kit.Register(vocab.Variant{Name: Name, Paper: paper, Summary: summary, Order: 15, InOrder: kit.InOrderAlways()}, newDGLOnDisk, (*options).bind, size)
}

// options are DGL-OnDisk's settings.
type options struct {
	readBlock int64
	profile   int
}

func (o *options) bind(b *kit.Binder) {
	b.ReadBlock(&o.readBlock, 4096, "no artifact: the page size, one pread per feature row (DiskGNN §7.1)")
	b.ProfileBatches(&o.profile, "to size the plan")
}

var parseOptions = kit.Bind[options]((*options).bind).Parse

// deviations are the guesses where DiskGNN §7.1 is silent (doc.go).
func deviations(opt options) []string {
	d := []string{
		"training runs on the CPU (the paper's DGL-OnDisk trains on a GPU)",
		"the paper says only that DGL-OnDisk reads node features with pread: here each feature row is one O_DIRECT pread of its 4 KiB-aligned blocks, so no page cache serves as the CPU cache the paper says it lacks",
		"the paper does not say how DGL-OnDisk's data loader overlaps its stages: sample, feature reads and training run one after the other, as DGL's DataLoader with num_workers=0",
		"the paper does not say where DGL-OnDisk keeps the graph structure: it is held in memory (DGL's graph object) and counted in the memory budget",
	}
	if opt.readBlock != 4096 {
		d = append(d, fmt.Sprintf("read_block=%d: reads of %d B blocks instead of the 4 KiB page", opt.readBlock, opt.readBlock))
	}
	return d
}

func newDGLOnDisk(cfg train.Config) (*dglOnDisk, error) {
	opt, err := parseOptions(cfg)
	if err != nil {
		return nil, err
	}
	return &dglOnDisk{opt: opt, Base: kit.NewBase(Name, kit.OnCPU("sample", "extract", "train"), deviations(opt)...)}, nil
}
