package nn

import "fmt"

// Tensor is a dense row-major float32 matrix: element (r, c) is
// Data[r*Cols+c]. len(Data) may exceed Rows*Cols only through Resize.
type Tensor struct {
	Rows, Cols int
	Data       []float32
}

// NewTensor allocates a zeroed rows×cols tensor on the Go heap.
func NewTensor(rows, cols int) *Tensor {
	return &Tensor{Rows: rows, Cols: cols, Data: make([]float32, rows*cols)}
}

// FromSlice wraps data (len rows*cols) as a tensor without copying.
func FromSlice(rows, cols int, data []float32) *Tensor {
	if len(data) != rows*cols {
		panic(fmt.Sprintf("nn.FromSlice: len(data)=%d, want %d×%d=%d", len(data), rows, cols, rows*cols))
	}
	return &Tensor{Rows: rows, Cols: cols, Data: data}
}

// Row returns row r as a slice aliasing the tensor's storage.
func (t *Tensor) Row(r int) []float32 { return t.Data[r*t.Cols : (r+1)*t.Cols] }

// Resize reshapes t to rows×cols, reusing its storage when large enough.
// Contents are unspecified afterwards.
func (t *Tensor) Resize(rows, cols int) {
	n := rows * cols
	if cap(t.Data) < n {
		t.Data = make([]float32, n)
	}
	t.Data = t.Data[:n]
	t.Rows, t.Cols = rows, cols
}

// Zero sets every element to 0.
func (t *Tensor) Zero() { clear(t.Data[:t.Rows*t.Cols]) }

// Clone returns a heap copy of t.
func (t *Tensor) Clone() *Tensor {
	c := NewTensor(t.Rows, t.Cols)
	copy(c.Data, t.Data[:t.Rows*t.Cols])
	return c
}

// Slice returns rows [lo, hi) as a tensor aliasing t's storage.
func (t *Tensor) Slice(lo, hi int) *Tensor {
	return &Tensor{Rows: hi - lo, Cols: t.Cols, Data: t.Data[lo*t.Cols : hi*t.Cols]}
}

// String prints the shape only.
func (t *Tensor) String() string { return fmt.Sprintf("Tensor(%d×%d)", t.Rows, t.Cols) }
