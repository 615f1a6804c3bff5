package dataset

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"time"

	"outcore/internal/osutil"
)

// Generate writes a synthetic dataset called name under datasetsDir and
// returns it opened. The graph is a power-law graph with planted
// communities, produced directly in CSC order, node by node:
//
//   - node v's class is c(v) = P(v) mod C for a keyed pseudorandom
//     permutation P of [0, N), and its popularity rank inside the class is
//     P(v) div C (so classes have equal sizes and popular nodes are scattered
//     over the id space);
//   - its in-degree is MinDegree + a Lomax (shifted Pareto) draw with tail
//     index DegreeExponent, capped at MaxDegree, with the scale solved so the
//     mean is AvgDegree;
//   - each in-neighbour comes from c(v) with probability Homophily, else from
//     a uniformly chosen other class, and inside the class by popularity rank
//     r with probability ∝ (r+1)^-Popularity (so out-degrees are heavy-tailed
//     too); duplicates and self-loops are redrawn, and the list is sorted;
//   - its features are the class centroid plus N(0, Noise²) per entry;
//   - it joins train/val/test with the configured probabilities.
//
// Every node has its own random streams derived from (Seed, v) — with the
// structure options from (Seed, position of v) — so the output
// is byte-identical for a seed whatever the number of workers. Memory is
// O(Classes×FeatureDim) plus a few blocks in flight per worker: never
// O(Nodes×FeatureDim) or O(Edges). progress, when not nil, receives a
// carriage-return status line a few times a second.
func Generate(ctx context.Context, datasetsDir, name string, cfg GenConfig, progress io.Writer) (*Dataset, error) {
	return GenerateWith(ctx, datasetsDir, name, cfg, GenOptions{Progress: progress})
}

// GenOptions are the knobs of GenerateWith that are not part of the
// dataset's identity (and so are not stored in meta.json).
type GenOptions struct {
	// Progress receives status lines (nil = silent).
	Progress io.Writer
	// Force replaces an existing dataset of the same name.
	Force bool
	// Preset is recorded in meta.json's source when set.
	Preset string
	// NoIndptr skips loading indptr into the returned Dataset (its Indptr
	// is nil), keeping the caller's memory independent of the node count.
	NoIndptr bool
}

// GenerateWith is Generate with options.
func GenerateWith(ctx context.Context, datasetsDir, name string, cfg GenConfig, opt GenOptions) (*Dataset, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.resolved()
	w, err := NewWriter(datasetsDir, name, opt.Force)
	if err != nil {
		return nil, err
	}
	defer w.Abort()
	g := newGenerator(cfg)
	meta, err := g.run(ctx, w, opt.Progress)
	if err != nil {
		return nil, fmt.Errorf("generate %s: %w", name, err)
	}
	meta.Source = Source{Kind: "generator", Generator: &cfg, Preset: opt.Preset}
	if err := w.CommitStreaming(meta); err != nil {
		return nil, err
	}
	if opt.NoIndptr {
		m, err := ReadMeta(w.FinalDir())
		if err != nil {
			return nil, err
		}
		return &Dataset{Dir: w.FinalDir(), Meta: m}, nil
	}
	return openChecked(w.FinalDir())
}

// generator holds the precomputed state of one generation run.
type generator struct {
	cfg        GenConfig
	perm       *feistel
	classes    uint64
	classSize  []uint64  // nodes per class
	rankTable  []float64 // inverse CDF of the popularity rank, tabulated
	centroids  []float32 // Classes × FeatureDim
	noise      []float32 // normTable × Noise
	lomaxScale float64
	negInvExp  float64 // -1/DegreeExponent
	blockNodes int64
	st         *structure // nil unless cfg.Structured()
}

func newGenerator(cfg GenConfig) *generator {
	g := &generator{cfg: cfg, classes: uint64(cfg.Classes)}
	g.perm = newFeistel(uint64(cfg.Nodes), mix64(cfg.Seed^0x5eed))
	g.classSize = make([]uint64, cfg.Classes)
	for k := range g.classSize {
		g.classSize[k] = (uint64(cfg.Nodes) - uint64(k) + g.classes - 1) / g.classes
	}
	g.rankTable = rankTable(g.classSize[0], cfg.Popularity)
	// Class centroids: i.i.d. N(0, s²) entries with s = Separation/sqrt(2D),
	// so two centroids are Separation apart in expectation.
	d := cfg.FeatureDim
	s := cfg.Separation / math.Sqrt(2*float64(d))
	g.centroids = make([]float32, cfg.Classes*d)
	r := newStream(cfg.Seed, 0, streamGlobal)
	for i := range g.centroids {
		g.centroids[i] = float32(s * r.normal())
	}
	g.noise = make([]float32, len(normTable))
	for i, z := range normTable {
		g.noise[i] = z * float32(cfg.Noise)
	}
	g.negInvExp = -1 / cfg.DegreeExponent
	g.lomaxScale = solveLomaxScale(cfg.AvgDegree-float64(cfg.MinDegree), cfg.DegreeExponent, cfg.MaxDegree-cfg.MinDegree)
	// About 1 MiB of features per block, at least 64 nodes.
	g.blockNodes = max(64, min(16384, (1<<20)/(int64(d)*4)))
	if cfg.Structured() {
		g.st = newStructure(cfg)
	}
	return g
}

// solveLomaxScale finds λ such that E[min(floor(X), cap)] = mean for
// X ~ Lomax(shape a, scale λ), where E = Σ_{k=1..cap} (1+k/λ)^-a.
func solveLomaxScale(mean, a float64, capDeg int64) float64 {
	if mean <= 0 || capDeg <= 0 {
		return 0
	}
	expect := func(lam float64) float64 {
		const exact = 2000
		var s float64
		k := int64(1)
		for ; k <= capDeg && k <= exact; k++ {
			s += math.Pow(1+float64(k)/lam, -a)
		}
		if k <= capDeg { // integral for the rest, midpoint-corrected
			lo, hi := float64(k)-0.5, float64(capDeg)+0.5
			s += lam / (a - 1) * (math.Pow(1+lo/lam, 1-a) - math.Pow(1+hi/lam, 1-a))
		}
		return s
	}
	lo, hi := 1e-9, 1e12
	for i := 0; i < 200 && hi/lo > 1+1e-12; i++ {
		mid := math.Sqrt(lo * hi)
		if expect(mid) < mean {
			lo = mid
		} else {
			hi = mid
		}
	}
	return math.Sqrt(lo * hi)
}

// rankTableSize is the number of intervals of the tabulated inverse CDF.
const rankTableSize = 1 << 14

// rankTable tabulates the inverse CDF of a continuous power law ∝ x^-β on
// [1, n+1): F⁻¹(u) = (1 + u((n+1)^(1-β) - 1))^(1/(1-β)) (β = 1: (n+1)^u).
// Sampling interpolates linearly between entries, which replaces a math.Pow
// per edge by a multiply-add; the relative error of the interpolation is
// below (1/(1-β)/2^14)² (≈1e-7 for β = 0.8). Classes differ in size by at
// most one node, so all share the largest class's table (ranks are clamped).
func rankTable(n uint64, beta float64) []float64 {
	t := make([]float64, rankTableSize+1)
	for i := range t {
		u := float64(i) / rankTableSize
		switch {
		case beta == 0:
			t[i] = 1 + u*float64(n)
		case beta == 1:
			t[i] = math.Exp(u * math.Log(float64(n)+1))
		default:
			t[i] = math.Pow(1+u*(math.Pow(float64(n)+1, 1-beta)-1), 1/(1-beta))
		}
	}
	return t
}

// classOf returns the class and in-class popularity rank of node v.
func (g *generator) classOf(v int64) (class, rank uint64) {
	if g.st != nil {
		p := g.posOf(v)
		k := g.st.classAt(p)
		return k, p - g.st.start[k]
	}
	p := g.perm.fwd(uint64(v))
	return p % g.classes, p / g.classes
}

// streamKey is what a node's random streams are derived from: its id,
// or with the structured generator its position, so that the same
// configuration with and without IDLocality makes the same graph
// numbered two ways (GenConfig.WithIDs). With IDLocality the position is
// the id, so id-local datasets are what they were before streams were
// keyed by position.
func (g *generator) streamKey(v int64) uint64 {
	if g.st != nil {
		return g.posOf(v)
	}
	return uint64(v)
}

// posOf maps a node to its position (see pick); nodeAt is the inverse.
func (g *generator) posOf(v int64) uint64 {
	if g.st != nil && g.cfg.IDLocality {
		return uint64(v)
	}
	return g.perm.fwd(uint64(v))
}

func (g *generator) nodeAt(p uint64) int64 {
	if g.st != nil && g.cfg.IDLocality {
		return int64(p)
	}
	return int64(g.perm.inv(p))
}

// classOfPos is the class of a position.
func (g *generator) classOfPos(p uint64) uint64 {
	if g.st != nil {
		return g.st.classAt(p)
	}
	return p % g.classes
}

// degree draws the in-degree of a node.
func (g *generator) degree(r *wyrand) int64 {
	c := &g.cfg
	d := c.MinDegree
	if g.lomaxScale > 0 {
		u := 1 - r.float64()                                        // (0, 1]
		x := g.lomaxScale * (math.Exp(math.Log(u)*g.negInvExp) - 1) // u^(-1/a)
		capX := float64(c.MaxDegree - c.MinDegree)
		if x > capX {
			x = capX
		}
		d += int64(x)
	}
	return d
}

// pick draws one in-neighbour for a node of class own and returns its
// position in permutation space (class = pos mod C; node = perm.inv(pos)).
func (g *generator) pick(r *wyrand, own uint64) uint64 {
	k := own
	if r.float64() >= g.cfg.Homophily {
		k = (own + 1 + r.intn(g.classes-1)) % g.classes
	}
	x := r.next()
	i := x >> (64 - 14) // top 14 bits choose the interval
	f := float64(x<<14>>11) * (1.0 / (1 << 53))
	lo := g.rankTable[i]
	rank := uint64(lo+f*(g.rankTable[i+1]-lo)) - 1
	if n := g.classSize[k]; rank >= n {
		rank = n - 1
	}
	return k + g.classes*rank
}

// Split membership codes in a block.
const (
	inNoSplit = iota
	inTrain
	inVal
	inTest
)

// genBlock is the output of one block of consecutive nodes.
type genBlock struct {
	start, count int64
	degrees      []int64
	indices      []int64
	features     []float32
	labels       []int32
	split        []uint8
	sameClass    int64 // edges whose endpoints share a class
	seen         uintSet
}

// uintSet is a reusable open-addressing hash set of uint64 for the
// duplicate check of one node's neighbour draws. Generation stamps make
// reset O(1) instead of clearing the table.
type uintSet struct {
	keys  []uint64
	stamp []uint32
	gen   uint32
	mask  uint64
}

// reset empties the set and sizes it for n insertions (load ≤ 1/2).
func (s *uintSet) reset(n int64) {
	size := uint64(16)
	for size < uint64(2*n) {
		size <<= 1
	}
	if uint64(len(s.keys)) < size {
		s.keys = make([]uint64, size)
		s.stamp = make([]uint32, size)
		s.gen = 0
	}
	s.mask = size - 1
	s.gen++
	if s.gen == 0 { // wrapped: clear stamps once every 2^32 resets
		clear(s.stamp)
		s.gen = 1
	}
}

// insert adds x and reports whether it was absent.
func (s *uintSet) insert(x uint64) bool {
	i := (x * 0x9e3779b97f4a7c15) >> 20 & s.mask
	for {
		if s.stamp[i] != s.gen {
			s.stamp[i], s.keys[i] = s.gen, x
			return true
		}
		if s.keys[i] == x {
			return false
		}
		i = (i + 1) & s.mask
	}
}

// fill generates nodes [start, start+count) into b.
func (g *generator) fill(b *genBlock, start, count int64) {
	c := &g.cfg
	dim := c.FeatureDim
	b.start, b.count = start, count
	b.degrees = b.degrees[:0]
	b.indices = b.indices[:0]
	b.labels = b.labels[:0]
	b.split = b.split[:0]
	b.sameClass = 0
	if cap(b.features) < int(count)*dim {
		b.features = make([]float32, int(count)*dim)
	}
	b.features = b.features[:int(count)*dim]
	tTrain, tVal, tTest := c.TrainFrac, c.TrainFrac+c.ValFrac, c.TrainFrac+c.ValFrac+c.TestFrac
	for i := int64(0); i < count; i++ {
		v := start + i
		own, _ := g.classOf(v)
		key := g.streamKey(v)
		r := newStream(c.Seed, key, streamGraph)

		// Split and label.
		s := uint8(inNoSplit)
		switch u := r.float64(); {
		case u < tTrain:
			s = inTrain
		case u < tVal:
			s = inVal
		case u < tTest:
			s = inTest
		}
		b.split = append(b.split, s)
		label := int32(own)
		if c.LabelSplitOnly && s == inNoSplit {
			label = -1
		}
		b.labels = append(b.labels, label)

		// In-neighbours, drawn as permutation positions (unique iff the
		// nodes are): a draw that repeats one already taken, or is v itself,
		// is redrawn, up to 4d draws in all. Same-class edges are counted on
		// positions (pos mod C), which are then mapped to node ids and sorted.
		d := g.degree(&r)
		self := g.posOf(v)
		base := len(b.indices)
		b.seen.reset(d)
		var window uint64
		if g.st != nil {
			window = g.st.windowFor(d)
		}
		for tries := 4 * d; int64(len(b.indices)-base) < d && tries > 0; tries-- {
			if g.st != nil {
				if p, ok := g.st.pick(&r, own, self, window, &b.seen); ok {
					b.indices = append(b.indices, int64(p))
				}
				continue
			}
			p := g.pick(&r, own)
			if p == self || !b.seen.insert(p) {
				continue
			}
			b.indices = append(b.indices, int64(p))
		}
		list := b.indices[base:]
		for j, p := range list {
			if g.classOfPos(uint64(p)) == own {
				b.sameClass++
			}
			list[j] = g.nodeAt(uint64(p))
		}
		slices.Sort(list)
		b.degrees = append(b.degrees, int64(len(list)))

		// Features: centroid + noise, four normals per 64-bit draw.
		fr := newStream(c.Seed, key, streamFeatures)
		row := b.features[int(i)*dim : int(i+1)*dim]
		cent := g.centroids[int(own)*dim : int(own+1)*dim]
		j := 0
		for ; j+4 <= dim; j += 4 {
			x := fr.next()
			row[j] = cent[j] + g.noise[uint16(x)]
			row[j+1] = cent[j+1] + g.noise[uint16(x>>16)]
			row[j+2] = cent[j+2] + g.noise[uint16(x>>32)]
			row[j+3] = cent[j+3] + g.noise[uint16(x>>48)]
		}
		if j < dim {
			x := fr.next()
			for ; j < dim; j++ {
				row[j] = cent[j] + g.noise[uint16(x)]
				x >>= 16
			}
		}
	}
}

// run generates every block with a worker pool and writes them in order.
func (g *generator) run(ctx context.Context, w *Writer, progress io.Writer) (Meta, error) {
	c := &g.cfg
	var meta Meta
	files := map[string]*bufio.Writer{}
	for _, f := range []string{IndptrFile, IndicesFile, LabelsFile, TrainFile, ValFile, TestFile} {
		fh, err := w.Create(f)
		if err != nil {
			return meta, err
		}
		files[f] = bufio.NewWriterSize(newSeqWriter(fh), 1<<20)
	}
	featFile, err := w.Create(FeaturesFile)
	if err != nil {
		return meta, err
	}
	feat := newSeqWriter(featFile)

	workers := c.Workers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	nblocks := (c.Nodes + g.blockNodes - 1) / g.blockNodes
	type job struct {
		idx int64
		out chan *genBlock
	}
	jobs := make(chan job)
	order := make(chan chan *genBlock, 2*workers)
	// Blocks dispatched but not yet written are at most cap(order)+2, so
	// this many buffers means a worker never waits on one the writer holds.
	free := make(chan *genBlock, 2*workers+4)
	for range 2*workers + 4 {
		free <- &genBlock{}
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() { // producer: hands out blocks in order
		defer close(order)
		defer close(jobs)
		for i := int64(0); i < nblocks; i++ {
			out := make(chan *genBlock, 1)
			select {
			case order <- out:
			case <-stop:
				return
			}
			select {
			case jobs <- job{i, out}:
			case <-stop:
				return
			}
		}
	}()
	for range workers {
		go func() {
			for j := range jobs {
				var b *genBlock
				select {
				case b = <-free:
				case <-stop:
					return
				}
				start := j.idx * g.blockNodes
				g.fill(b, start, min(g.blockNodes, c.Nodes-start))
				j.out <- b
			}
		}()
	}

	var (
		edges, sameClass, labeled int64
		counts                    [4]int64
		i64                       = make([]int64, 0, 1<<14)
		one                       [8]byte
		began                     = time.Now()
		lastReport                time.Time
	)
	writeI64 := func(bw *bufio.Writer, xs []int64) error {
		_, err := bw.Write(osutil.Bytes(xs))
		return err
	}
	if err := writeI64(files[IndptrFile], []int64{0}); err != nil {
		return meta, fmt.Errorf("write %s: %w", IndptrFile, err)
	}
	var done int64
	for out := range order {
		if err := ctx.Err(); err != nil {
			return meta, err
		}
		var b *genBlock
		select {
		case b = <-out:
		case <-ctx.Done():
			return meta, ctx.Err()
		}
		// indptr
		i64 = i64[:0]
		for _, d := range b.degrees {
			edges += d
			i64 = append(i64, edges)
		}
		if err := writeI64(files[IndptrFile], i64); err != nil {
			return meta, fmt.Errorf("write %s: %w", IndptrFile, err)
		}
		if err := writeI64(files[IndicesFile], b.indices); err != nil {
			return meta, fmt.Errorf("write %s: %w", IndicesFile, err)
		}
		if _, err := feat.Write(osutil.Bytes(b.features)); err != nil {
			return meta, fmt.Errorf("write %s: %w", FeaturesFile, err)
		}
		if _, err := files[LabelsFile].Write(osutil.Bytes(b.labels)); err != nil {
			return meta, fmt.Errorf("write %s: %w", LabelsFile, err)
		}
		for i, s := range b.split {
			if b.labels[i] >= 0 {
				labeled++
			}
			if s == inNoSplit {
				continue
			}
			counts[s]++
			f := [...]string{"", TrainFile, ValFile, TestFile}[s]
			le.PutUint64(one[:], uint64(b.start+int64(i)))
			if _, err := files[f].Write(one[:]); err != nil {
				return meta, fmt.Errorf("write %s: %w", f, err)
			}
		}
		sameClass += b.sameClass
		done += b.count
		free <- b
		if progress != nil && time.Since(lastReport) > 200*time.Millisecond {
			lastReport = time.Now()
			reportProgress(progress, w.Name(), done, c.Nodes, done*int64(c.FeatureDim)*4, began)
		}
	}
	for name, bw := range files {
		if err := bw.Flush(); err != nil {
			return meta, fmt.Errorf("write %s: %w", name, err)
		}
	}
	if progress != nil {
		reportProgress(progress, w.Name(), done, c.Nodes, done*int64(c.FeatureDim)*4, began)
		fmt.Fprintln(progress)
	}
	if done != c.Nodes {
		return meta, fmt.Errorf("internal error: wrote %d of %d nodes", done, c.Nodes)
	}
	meta = Meta{
		Nodes: c.Nodes, Edges: edges, FeatureDim: c.FeatureDim, Classes: c.Classes,
		Labeled: labeled, Train: counts[inTrain], Val: counts[inVal], Test: counts[inTest],
		SortedNeighbors: true,
	}
	if edges > 0 {
		h := float64(sameClass) / float64(edges)
		meta.EdgeHomophily = &h
	}
	return meta, nil
}

func reportProgress(w io.Writer, name string, done, total, bytes int64, began time.Time) {
	el := time.Since(began).Seconds()
	rate := 0.0
	if el > 0 {
		rate = float64(bytes) / el / 1e6
	}
	fmt.Fprintf(w, "\rgenerating %s: %5.1f%%  %d/%d nodes  %.0f MiB features  %.0f MB/s  %.1fs ",
		name, 100*float64(done)/float64(max(total, 1)), done, total, float64(bytes)/(1<<20), rate, el)
}
