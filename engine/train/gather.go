package train

import (
	"context"
	"fmt"

	"outcore/engine/nn"
	"outcore/engine/storage"
	"outcore/internal/osutil"
)

// Gatherer reads feature rows through one storage Reader (one goroutine's
// worth of I/O) straight into a tensor.
type Gatherer struct {
	r   storage.Reader
	dim int
}

// NewGatherer takes a new Reader of f, a features file opened with RowBytes
// = dim×4.
func NewGatherer(f *storage.File, dim int) (*Gatherer, error) {
	if f.RowBytes() != int64(dim)*4 {
		return nil, fmt.Errorf("gatherer: features file row size %d, want %d (dim %d float32)", f.RowBytes(), dim*4, dim)
	}
	r, err := f.NewReader()
	if err != nil {
		return nil, fmt.Errorf("gatherer: new reader of %s: %w", f.Path(), err)
	}
	return &Gatherer{r: r, dim: dim}, nil
}

// Gather resizes x to len(ids)×dim and fills row i with the features of node
// ids[i].
func (g *Gatherer) Gather(ctx context.Context, ids []int64, x *nn.Tensor) error {
	x.Resize(len(ids), g.dim)
	if len(ids) == 0 {
		return nil
	}
	if err := g.r.ReadRows(ctx, ids, osutil.Bytes(x.Data)); err != nil {
		return fmt.Errorf("gather %d feature rows: %w", len(ids), err)
	}
	return nil
}

// Reader is the storage Reader in use.
func (g *Gatherer) Reader() storage.Reader { return g.r }

// Close releases the Reader.
func (g *Gatherer) Close() error { return g.r.Close() }
