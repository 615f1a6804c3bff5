package kit

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type testCloser struct {
	err    error
	closed *[]string
	name   string
}

func (c *testCloser) Close() error { *c.closed = append(*c.closed, c.name); return c.err }

// TestCloser: resources close in order, nil ones are skipped, every error
// is kept under the variant's name, and a kept directory stays.
func TestCloser(t *testing.T) {
	var order []string
	a := &testCloser{closed: &order, name: "a"}
	b := &testCloser{closed: &order, name: "b", err: errors.New("b failed")}
	var none *testCloser
	dir := t.TempDir()
	gone, kept := filepath.Join(dir, "gone"), filepath.Join(dir, "kept")
	for _, d := range []string{gone, kept} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var c Closer
	c.Close(a, nil, none, b)
	c.Func(nil)
	c.Func(func() error { order = append(order, "f"); return nil })
	c.Add(nil, errors.New("free failed"))
	c.Remove(gone, false)
	c.Remove(kept, true)
	c.Remove("", false)
	err := c.Err("toy")
	if strings.Join(order, ",") != "a,b,f" || err == nil || !strings.HasPrefix(err.Error(), "close toy: ") ||
		!strings.Contains(err.Error(), "b failed") || !strings.Contains(err.Error(), "free failed") {
		t.Fatalf("order %v, err %v", order, err)
	}
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Errorf("removed directory: %v", err)
	}
	if _, err := os.Stat(kept); err != nil {
		t.Errorf("kept directory: %v", err)
	}
	var ok Closer
	ok.Close(a)
	if err := ok.Err("toy"); err != nil {
		t.Errorf("no failure: %v", err)
	}
}
