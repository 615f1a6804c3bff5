package osutil

import (
	"encoding/binary"
	"math"
	"testing"
)

func TestBytesAndView(t *testing.T) {
	ints := []int64{1, -2, math.MaxInt64}
	b := Bytes(ints)
	if len(b) != 24 {
		t.Fatalf("len %d", len(b))
	}
	if v := int64(binary.NativeEndian.Uint64(b[8:])); v != -2 {
		t.Fatalf("second int64 through the byte view = %d", v)
	}
	b[0] = 7 // a view, not a copy
	if ints[0] != 7 {
		t.Fatalf("write through the view not seen: %d", ints[0])
	}
	back := View[int64](b)
	if len(back) != 3 || back[2] != math.MaxInt64 || &back[0] != &ints[0] {
		t.Fatalf("view back %v", back)
	}
	fs := []float32{1.5, -0}
	if got := View[float32](Bytes(fs)); got[0] != 1.5 || len(got) != 2 {
		t.Fatalf("float32 round trip %v", got)
	}
	if Bytes([]int32{}) != nil || View[int64](make([]byte, 7)) != nil {
		t.Fatal("empty inputs must give nil")
	}
	if got := View[int32](Bytes(make([]int32, 3))[:10]); len(got) != 2 {
		t.Fatalf("partial trailing element kept: %d elements", len(got))
	}
	defer func() {
		if recover() == nil {
			t.Fatal("misaligned view did not panic")
		}
	}()
	raw := Bytes(make([]int64, 8))
	View[int64](raw[1:17])
}

func TestLittleEndian(t *testing.T) {
	want := binary.NativeEndian.Uint16([]byte{1, 0}) == 1
	if LittleEndian() != want {
		t.Fatalf("LittleEndian() = %v, native order says %v", LittleEndian(), want)
	}
}

func TestAligned(t *testing.T) {
	b := make([]byte, 16) // the allocator aligns it for any number type
	if !Aligned[int64](b) || !Aligned[int64](b[8:]) || Aligned[int64](b[4:]) || !Aligned[int32](b[4:]) || Aligned[int32](b[1:]) || !Aligned[int64](nil) {
		t.Fatal("Aligned misjudges offsets of an aligned buffer")
	}
}
