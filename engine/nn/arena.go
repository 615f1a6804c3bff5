package nn

// Arena is a bump allocator for float32 and int32 scratch memory. Reset
// makes all of it reusable; when a step needed more than one chunk, Reset
// coalesces them into one chunk of the total size, so a training loop whose
// batches are similar in size stops allocating after a step or two.
// An Arena is not safe for concurrent use.
type Arena struct {
	f    chunkList[float32]
	i    chunkList[int32]
	hdrs []Tensor
	nhdr int
}

type chunkList[T any] struct {
	chunks [][]T
	cur    int // index of chunk in use
	off    int // offset in chunks[cur]
	peak   int // total used since last reset
}

const minChunk = 1 << 16

func (c *chunkList[T]) alloc(n int) []T {
	c.peak += n
	for c.cur < len(c.chunks) {
		ch := c.chunks[c.cur]
		if c.off+n <= len(ch) {
			s := ch[c.off : c.off+n : c.off+n]
			c.off += n
			return s
		}
		c.cur++
		c.off = 0
	}
	size := max(n, minChunk)
	ch := make([]T, size)
	c.chunks = append(c.chunks, ch)
	c.cur = len(c.chunks) - 1
	c.off = n
	return ch[:n:n]
}

func (c *chunkList[T]) reset() {
	if len(c.chunks) > 1 && c.capacity() < c.peak+c.peak/8 {
		// one chunk big enough for the last step's peak (plus slack)
		c.reserve(c.peak + c.peak/8)
	}
	c.cur, c.off, c.peak = 0, 0, 0
}

func (c *chunkList[T]) capacity() int {
	t := 0
	for _, ch := range c.chunks {
		t += len(ch)
	}
	return t
}

// reserve makes the list one chunk of at least n elements (and at least
// its current capacity). The old chunks are dropped first so that, under a
// memory limit, the collector can reuse them for the new one instead of
// holding both.
func (c *chunkList[T]) reserve(n int) {
	if len(c.chunks) == 1 && len(c.chunks[0]) >= n {
		return
	}
	n = max(n, c.capacity())
	c.chunks = nil
	c.chunks = [][]T{make([]T, n)}
	c.cur, c.off, c.peak = 0, 0, 0
}

func (c *chunkList[T]) bytes(elem int) int {
	t := 0
	for _, ch := range c.chunks {
		t += len(ch)
	}
	return t * elem
}

// Reset releases every allocation made since the previous Reset.
// Tensors and slices handed out before must not be used afterwards.
func (a *Arena) Reset() {
	a.f.reset()
	a.i.reset()
	a.nhdr = 0
}

// Tensor returns a zeroed rows×cols tensor backed by the arena.
func (a *Arena) Tensor(rows, cols int) *Tensor {
	t := a.TensorNoZero(rows, cols)
	clear(t.Data)
	return t
}

// TensorNoZero is Tensor without clearing: the caller overwrites every element.
func (a *Arena) TensorNoZero(rows, cols int) *Tensor {
	if a.nhdr == len(a.hdrs) {
		// headers live in blocks so earlier *Tensor stay valid when we grow
		a.hdrs = make([]Tensor, max(64, 2*len(a.hdrs)))
		a.nhdr = 0
	}
	t := &a.hdrs[a.nhdr]
	a.nhdr++
	*t = Tensor{Rows: rows, Cols: cols, Data: a.f.alloc(rows * cols)}
	return t
}

// Floats returns n uninitialised float32s backed by the arena.
func (a *Arena) Floats(n int) []float32 { return a.f.alloc(n) }

// Ints returns n uninitialised int32s backed by the arena.
func (a *Arena) Ints(n int) []int32 { return a.i.alloc(n) }

// Reserve sizes the arena for a step that needs floats float32s and ints
// int32s, in one chunk each, so that the step allocates nothing and a
// memory budget sees the workspace from the start. It must not be called
// while tensors from the arena are in use.
func (a *Arena) Reserve(floats, ints int) {
	a.f.reserve(floats)
	a.i.reserve(ints)
}

// Sizes reports the arena's reserved float32 and int32 elements.
func (a *Arena) Sizes() (floats, ints int) { return a.f.capacity(), a.i.capacity() }

// Bytes reports the arena's reserved memory in bytes.
func (a *Arena) Bytes() int { return a.f.bytes(4) + a.i.bytes(4) }

// Release drops all of the arena's memory (for the garbage collector); the
// next allocations start from scratch.
func (a *Arena) Release() {
	*a = Arena{}
}
