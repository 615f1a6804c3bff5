package cgroup

import (
	"path/filepath"
	"testing"
)

// TestLimitLiftHold: the limit a placed process holds is its group's:
// Lift removes it, Hold sets budget + extra, and a zero budget leaves the
// group alone.
func TestLimitLiftHold(t *testing.T) {
	m := detect(t)
	g := newGroup(t, m, 64<<20)
	l, err := OpenLimit(g.Path, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	if !l.Enforced() || l.Bytes() != 64<<20 || l.Path() != g.Path {
		t.Fatalf("limit %+v", l)
	}
	if err := l.Lift(); err != nil {
		t.Fatal(err)
	}
	if v, ok := limitIn(g.Path); ok {
		t.Fatalf("limit %d still set after Lift", v)
	}
	if err := l.Hold(16 << 20); err != nil {
		t.Fatal(err)
	}
	if v, ok := limitIn(g.Path); !ok || v != 80<<20 {
		t.Fatalf("limit after Hold(16 MiB) = %d, %v; want 80 MiB", v, ok)
	}
	if err := l.Hold(-1); err == nil {
		t.Fatal("negative allowance accepted")
	}

	none, err := OpenLimit(g.Path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if none.Enforced() || none.Lift() != nil || none.Hold(1<<20) != nil {
		t.Fatal("a zero budget must not be enforced and must leave the group alone")
	}
	if v, _ := limitIn(g.Path); v != 80<<20 {
		t.Fatalf("zero-budget limit changed the group to %d", v)
	}
	if _, err := OpenLimit(filepath.Join(t.TempDir()), 1); err == nil {
		t.Fatal("a plain directory opened as a memory cgroup")
	}
	if _, err := OpenLimit(g.Path, -1); err == nil {
		t.Fatal("negative budget accepted")
	}
}

func TestOuterLimit(t *testing.T) {
	l := OuterLimit(1 << 30)
	if !l.Enforced() || l.Bytes() != 1<<30 || l.Lift() != nil || l.Hold(5) != nil {
		t.Fatalf("outer limit %v", l)
	}
}
