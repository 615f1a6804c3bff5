package cgroup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLimitIn(t *testing.T) {
	dir := t.TempDir()
	write := func(name, v string) {
		os.WriteFile(filepath.Join(dir, name), []byte(v), 0o644)
	}
	if _, ok := limitIn(dir); ok {
		t.Fatal("limit without files")
	}
	write("memory.limit_in_bytes", "9223372036854771712\n") // v1 "no limit"
	if _, ok := limitIn(dir); ok {
		t.Fatal("v1 sentinel read as a limit")
	}
	write("memory.limit_in_bytes", "67108864\n")
	if v, ok := limitIn(dir); !ok || v != 64<<20 {
		t.Fatalf("v1 limit %d %v", v, ok)
	}
	write("memory.max", "max\n")
	if _, ok := limitIn(dir); ok {
		t.Fatal("v2 max read as a limit")
	}
	write("memory.max", "1048576\n")
	if v, ok := limitIn(dir); !ok || v != 1<<20 {
		t.Fatalf("v2 limit %d %v", v, ok)
	}
}

// TestSelfInGroup: a child placed in a group with a limit sees that group
// as its own (usage file and limit).
func TestSelfInGroup(t *testing.T) {
	m := detect(t)
	g := newGroup(t, m, 96<<20)
	cmd, out := helper(t, g, "self")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if want := g.Path + " 100663296 true"; !strings.Contains(out.String(), want) {
		t.Fatalf("child reports %q, want %q", out, want)
	}
}
