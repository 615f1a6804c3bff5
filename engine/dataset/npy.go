package dataset

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// npyArray is an opened .npy file (format versions 1–3) whose body is
// streamed on demand, never loaded whole.
type npyArray struct {
	path    string
	f       *os.File
	descr   string // e.g. "<f4"
	kind    byte   // 'f', 'i', 'u', 'b'
	size    int    // bytes per element
	shape   []int64
	dataOff int64
	elems   int64 // product of shape, checked against overflow
	bytes   int64 // elems × size
}

var (
	npyDescrRe   = regexp.MustCompile(`'descr'\s*:\s*'([^']*)'`)
	npyFortranRe = regexp.MustCompile(`'fortran_order'\s*:\s*(True|False)`)
	npyShapeRe   = regexp.MustCompile(`'shape'\s*:\s*\(([^)]*)\)`)
)

// openNPY opens path and parses its header. Only little-endian (or
// byte-sized) bool, int, uint and float dtypes in C order are accepted.
func openNPY(path string) (*npyArray, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadInput, err)
	}
	a, err := parseNPYHeader(path, f)
	if err != nil {
		f.Close()
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("stat %s: %w", path, err)
	}
	if want := a.dataOff + a.bytes; st.Size() != want {
		f.Close()
		return nil, fmt.Errorf("%w: %s: %d bytes, header (shape %s, %s) implies %d", ErrBadInput, path, st.Size(), a.shapeString(), a.descr, want)
	}
	return a, nil
}

// maxNPYBytes bounds the data an .npy header may describe (1 PiB): a
// larger shape is a crafted or corrupt header, and every size computed
// from it then fits an int64 with room to spare.
const maxNPYBytes = 1 << 50

// mulLimit returns a*b for non-negative a and b, and false when the product
// exceeds limit (checked without overflowing).
func mulLimit(a, b, limit int64) (int64, bool) {
	if a < 0 || b < 0 {
		return 0, false
	}
	if a == 0 || b == 0 {
		return 0, true
	}
	if a > limit/b {
		return 0, false
	}
	return a * b, true
}

// parseNPYHeader reads an .npy preamble and header from r. f, when set,
// is kept for streaming the body.
func parseNPYHeader(path string, r io.Reader) (*npyArray, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: not a valid .npy file: %s", ErrBadInput, path, fmt.Sprintf(format, args...))
	}
	f, _ := r.(*os.File)
	var pre [10]byte
	if _, err := io.ReadFull(r, pre[:8]); err != nil {
		return nil, bad("%v", err)
	}
	if string(pre[:6]) != "\x93NUMPY" {
		return nil, bad("missing \\x93NUMPY magic")
	}
	var hlen, off int64
	switch pre[6] {
	case 1:
		if _, err := io.ReadFull(r, pre[8:10]); err != nil {
			return nil, bad("%v", err)
		}
		hlen, off = int64(binary.LittleEndian.Uint16(pre[8:10])), 10
	case 2, 3:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, bad("%v", err)
		}
		hlen, off = int64(binary.LittleEndian.Uint32(b[:])), 12
	default:
		return nil, bad("format version %d.%d", pre[6], pre[7])
	}
	if hlen > 1<<20 {
		return nil, bad("header of %d bytes", hlen)
	}
	h := make([]byte, hlen)
	if _, err := io.ReadFull(r, h); err != nil {
		return nil, bad("header: %v", err)
	}
	hs := string(h)
	a := &npyArray{path: path, f: f, dataOff: off + hlen}
	m := npyDescrRe.FindStringSubmatch(hs)
	if m == nil {
		return nil, bad("no 'descr' in header %q", hs)
	}
	a.descr = m[1]
	if fm := npyFortranRe.FindStringSubmatch(hs); fm == nil {
		return nil, bad("no 'fortran_order' in header %q", hs)
	} else if fm[1] == "True" {
		return nil, fmt.Errorf("%w: %s: Fortran-order array; save it in C order (numpy.ascontiguousarray)", ErrBadInput, path)
	}
	sm := npyShapeRe.FindStringSubmatch(hs)
	if sm == nil {
		return nil, bad("no 'shape' in header %q", hs)
	}
	for _, s := range strings.Split(sm[1], ",") {
		s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "L"))
		if s == "" {
			continue
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return nil, bad("shape entry %q", s)
		}
		a.shape = append(a.shape, n)
	}
	d := a.descr
	if len(d) < 3 {
		return nil, fmt.Errorf("%w: %s: unsupported dtype %q", ErrBadInput, path, d)
	}
	order, kind := d[0], d[1]
	size, err := strconv.Atoi(d[2:])
	if err != nil {
		return nil, fmt.Errorf("%w: %s: unsupported dtype %q", ErrBadInput, path, d)
	}
	ok := false
	switch kind {
	case 'f':
		ok = size == 4 || size == 8
	case 'i', 'u':
		ok = size == 1 || size == 2 || size == 4 || size == 8
	case 'b':
		ok = size == 1
	}
	if !ok {
		return nil, fmt.Errorf("%w: %s: unsupported dtype %q (want float32/float64, int/uint 8–64 bit, or bool)", ErrBadInput, path, d)
	}
	if order == '>' && size > 1 {
		return nil, fmt.Errorf("%w: %s: big-endian dtype %q; convert with arr.astype(arr.dtype.newbyteorder('<'))", ErrBadInput, path, d)
	}
	a.kind, a.size = kind, size
	n := int64(1)
	for _, d := range a.shape {
		var ok bool
		if n, ok = mulLimit(n, d, maxNPYBytes/int64(size)); !ok {
			return nil, bad("shape %s describes more than %d bytes of data (1 PiB)", a.shapeString(), int64(maxNPYBytes))
		}
	}
	a.elems, a.bytes = n, n*int64(size)
	return a, nil
}

func (a *npyArray) Close() error { return a.f.Close() }

// count is the number of elements (the shape's product, which
// parseNPYHeader checked fits).
func (a *npyArray) count() int64 { return a.elems }

func (a *npyArray) shapeString() string {
	parts := make([]string, len(a.shape))
	for i, s := range a.shape {
		parts[i] = strconv.FormatInt(s, 10)
	}
	if len(parts) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// badShape formats a dimension/shape mismatch error.
func (a *npyArray) badShape(role, want string) error {
	return fmt.Errorf("%w: %s (%s): shape %s with %d dimension(s), want %s", ErrBadInput, a.path, role, a.shapeString(), len(a.shape), want)
}

// npyChunk is the number of elements converted per read.
const npyChunk = 1 << 16

// streamFloat32 reads elements [start, start+count) as float32 (converting
// float64), calling fn with chunks of whole multiples of align elements.
func (a *npyArray) streamFloat32(start, count int64, align int, fn func(off int64, xs []float32) error) error {
	if a.kind != 'f' {
		return fmt.Errorf("%w: %s: dtype %s, want float32 or float64", ErrBadInput, a.path, a.descr)
	}
	per := max(npyChunk/align, 1) * align
	raw := make([]byte, per*a.size)
	out := make([]float32, per)
	r := bufio.NewReaderSize(io.NewSectionReader(a.f, a.dataOff+start*int64(a.size), count*int64(a.size)), int(min(1<<20, max(count*int64(a.size), 16))))
	for done := int64(0); done < count; {
		n := min(int64(per), count-done)
		b := raw[:n*int64(a.size)]
		if _, err := io.ReadFull(r, b); err != nil {
			return fmt.Errorf("read %s: %w", a.path, err)
		}
		xs := out[:n]
		if a.size == 4 {
			for i := range xs {
				xs[i] = math.Float32frombits(le.Uint32(b[4*i:]))
			}
		} else {
			for i := range xs {
				xs[i] = float32(math.Float64frombits(le.Uint64(b[8*i:])))
			}
		}
		if err := fn(start+done, xs); err != nil {
			return err
		}
		done += n
	}
	return nil
}

// streamInt64 reads elements [start, start+count) as int64 (from any int,
// uint or bool dtype; floats are rejected unless allowFloat, in which case
// NaN becomes -1 and non-integral values are an error).
func (a *npyArray) streamInt64(start, count int64, allowFloat bool, fn func(off int64, xs []int64) error) error {
	if a.kind == 'f' && !allowFloat {
		return fmt.Errorf("%w: %s: dtype %s, want an integer type", ErrBadInput, a.path, a.descr)
	}
	raw := make([]byte, npyChunk*a.size)
	out := make([]int64, npyChunk)
	r := bufio.NewReaderSize(io.NewSectionReader(a.f, a.dataOff+start*int64(a.size), count*int64(a.size)), int(min(1<<20, max(count*int64(a.size), 16))))
	for done := int64(0); done < count; {
		n := min(int64(npyChunk), count-done)
		b := raw[:n*int64(a.size)]
		if _, err := io.ReadFull(r, b); err != nil {
			return fmt.Errorf("read %s: %w", a.path, err)
		}
		xs := out[:n]
		for i := range xs {
			switch {
			case a.kind == 'f':
				var x float64
				if a.size == 4 {
					x = float64(math.Float32frombits(le.Uint32(b[4*i:])))
				} else {
					x = math.Float64frombits(le.Uint64(b[8*i:]))
				}
				switch {
				case math.IsNaN(x):
					xs[i] = -1
				case x != math.Trunc(x) || math.Abs(x) > 1<<53:
					return fmt.Errorf("%w: %s: element %d = %v is not an integer", ErrBadInput, a.path, start+done+int64(i), x)
				default:
					xs[i] = int64(x)
				}
			case a.size == 1 && a.kind == 'i':
				xs[i] = int64(int8(b[i]))
			case a.size == 1:
				xs[i] = int64(b[i])
			case a.size == 2 && a.kind == 'i':
				xs[i] = int64(int16(le.Uint16(b[2*i:])))
			case a.size == 2:
				xs[i] = int64(le.Uint16(b[2*i:]))
			case a.size == 4 && a.kind == 'i':
				xs[i] = int64(int32(le.Uint32(b[4*i:])))
			case a.size == 4:
				xs[i] = int64(le.Uint32(b[4*i:]))
			case a.kind == 'i':
				xs[i] = int64(le.Uint64(b[8*i:]))
			default:
				u := le.Uint64(b[8*i:])
				if u > math.MaxInt64 {
					return fmt.Errorf("%w: %s: element %d = %d exceeds int64", ErrBadInput, a.path, start+done+int64(i), u)
				}
				xs[i] = int64(u)
			}
		}
		if err := fn(start+done, xs); err != nil {
			return err
		}
		done += n
	}
	return nil
}
