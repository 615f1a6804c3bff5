package osutil

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSeqReader: the chunks come back in order, the size is the file's,
// reading past the end fails naming the file and offset, and a missing
// file is refused at open.
func TestSeqReader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data")
	want := bytes.Repeat([]byte("0123456789abcdef"), 1000)
	if err := os.WriteFile(path, want, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := OpenSeq(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Size() != int64(len(want)) {
		t.Fatalf("size %d, want %d", r.Size(), len(want))
	}
	var got []byte
	for chunk := make([]byte, 4000); len(got) < len(want); got = append(got, chunk...) {
		if err := r.ReadFull(chunk); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got, want) {
		t.Fatal("the chunks read differ from the file")
	}
	err = r.ReadFull(make([]byte, 1))
	if !errors.Is(err, io.EOF) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "at 16000") {
		t.Fatalf("past the end: %v, want EOF naming %s at 16000", err, path)
	}
	if _, err := OpenSeq(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}
