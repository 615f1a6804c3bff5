package dataset

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestDigest(t *testing.T) {
	root := t.TempDir()
	a := genTiny(t, root, "a", nil)
	b := genTiny(t, filepath.Join(root, "other"), "a", func(c *GenConfig) { c.Workers = 3 })
	c := genTiny(t, root, "c", func(c *GenConfig) { c.Seed = 2 })
	da, err := Digest(a.Dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(da) != 64 {
		t.Fatalf("digest %q is not hex SHA-256", da)
	}
	// The same generator config regenerated elsewhere (as on a node) has
	// the same digest although its meta.json differs (creation time).
	if db, _ := Digest(b.Dir, false); db != da {
		t.Fatalf("regenerated copy: digest %s, original %s", db, da)
	}
	if dc, _ := Digest(c.Dir, false); dc == da {
		t.Fatal("another seed has the same digest")
	}
	if err := CheckDigest(b.Dir, da, true); err != nil {
		t.Fatalf("CheckDigest of an identical copy: %v", err)
	}
	if err := CheckDigest(c.Dir, da, true); !errors.Is(err, ErrDigestMismatch) {
		t.Fatalf("CheckDigest of another dataset: %v, want ErrDigestMismatch", err)
	}

	// The cache answers while no file changed, and is recomputed when one
	// did (a flipped byte with a new modification time).
	if _, err := os.Stat(filepath.Join(b.Dir, DigestFile)); err != nil {
		t.Fatalf("no digest cache written: %v", err)
	}
	p := filepath.Join(b.Dir, FeaturesFile)
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	raw[100] ^= 0xff
	if err := os.WriteFile(p, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(2 * time.Second)
	os.Chtimes(p, later, later)
	if err := CheckDigest(b.Dir, da, true); !errors.Is(err, ErrDigestMismatch) {
		t.Fatalf("CheckDigest after a changed byte: %v, want ErrDigestMismatch", err)
	}
	// Without the cache, a change that kept size and time is still seen.
	raw[100] ^= 0xff
	os.WriteFile(p, raw, 0o644)
	os.Chtimes(p, later, later)
	if err := CheckDigest(b.Dir, da, false); err != nil {
		t.Fatalf("restored file: %v", err)
	}
	if _, err := Digest(filepath.Join(root, "missing"), true); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing dataset: %v, want ErrNotFound", err)
	}
}
