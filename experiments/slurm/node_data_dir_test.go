package slurm

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestConfineNodeDataDir(t *testing.T) {
	root := t.TempDir()
	for _, c := range []struct{ p, err string }{
		{filepath.Join(root, "node"), ""},
		{filepath.Join(root, "a", "b"), ""},
		{root, ""},
		{"/etc/../root", `no ".." allowed`},
		{root + "/x/../../y", `no ".." allowed`},
		{"/root", "is outside the folder"},
		{root + "x", "is outside the folder"},
		{"relative/dir", "not an absolute path"},
		{root + "/a\nb", "control character"},
		{root + "/%j", "'%'"},
	} {
		got, err := ConfineNodeDataDir(root, c.p)
		if c.err == "" && (err != nil || got != filepath.Clean(c.p)) || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("ConfineNodeDataDir(%q) = %q, %v; want %q", c.p, got, err, c.err)
		}
	}
}

// FuzzConfineNodeDataDir: an accepted node data directory is absolute,
// clean, holds no "..", no control character and lies inside the root.
func FuzzConfineNodeDataDir(f *testing.F) {
	root := f.TempDir()
	for _, s := range []string{"/etc/../root", root + "/node", root + "/../x", "/root", root + "/a b/c", root + "//x/./y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		got, err := ConfineNodeDataDir(root, p)
		if err != nil {
			return
		}
		rel, rerr := filepath.Rel(root, got)
		if !filepath.IsAbs(got) || got != filepath.Clean(got) || rerr != nil || rel == ".." || strings.HasPrefix(rel, "../") ||
			strings.Contains(p, "/../") || strings.HasSuffix(p, "/..") || strings.ContainsAny(got, "\x00\n\r%") {
			t.Fatalf("ConfineNodeDataDir(%q) = %q", p, got)
		}
	})
}
