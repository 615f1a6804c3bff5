package osutil

import (
	"fmt"
	"unsafe"
)

// Number is a fixed-size number type whose slices can be viewed as bytes.
type Number interface {
	~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64 | ~float32 | ~float64
}

// Bytes views s as its bytes in host order, without copying (nil for an
// empty slice). The dataset format is little-endian and the dataset
// package refuses other hosts, so on every host outcore runs on this is
// the file order.
func Bytes[T Number](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}

// View views b as a slice of T in host order, without copying: len(b)/size
// elements (a trailing partial element is left out). b must be aligned for
// T (memory maps and AnonMap are page-aligned); View panics otherwise, as
// a misaligned view is a programming error.
func View[T Number](b []byte) []T {
	var zero T
	size := int(unsafe.Sizeof(zero))
	n := len(b) / size
	if n == 0 {
		return nil
	}
	if p := uintptr(unsafe.Pointer(&b[0])); p%unsafe.Alignof(zero) != 0 {
		panic(fmt.Sprintf("osutil.View: address %#x is not aligned for %T", p, zero))
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), n)
}

// Aligned reports whether b starts at an address aligned for T (what
// View requires); an empty b is aligned.
func Aligned[T Number](b []byte) bool {
	var zero T
	return len(b) == 0 || uintptr(unsafe.Pointer(&b[0]))%unsafe.Alignof(zero) == 0
}

// LittleEndian reports whether this host stores numbers little-endian.
func LittleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}
