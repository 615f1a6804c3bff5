package dataset

// A dataset's digest: one SHA-256 over its binary files, so that a copy of
// a dataset (another node's data directory, regenerated there by
// `outcore data gen`) can be checked against the one an experiment was
// planned on before a run trains on it (docs/ARCHITECTURE.md "Datasets on
// a cluster"). meta.json is not part of it: it records when and where the
// copy was made, which differs between identical copies.

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// DigestFile caches a dataset's digest in its directory, keyed by the size
// and modification time of every file it covers.
const DigestFile = ".digest.json"

// ErrDigestMismatch: a dataset's digest is not the one expected.
var ErrDigestMismatch = errors.New("dataset digest mismatch")

type digestCache struct {
	SHA256 string               `json:"sha256"`
	Files  map[string]fileStamp `json:"files"`
}

type fileStamp struct {
	Size    int64 `json:"size"`
	ModTime int64 `json:"mtime_ns"`
}

// Digest returns the hex SHA-256 of a dataset directory's binary files: for
// each of DataFiles in order, its name, its size (8 bytes little-endian)
// and its bytes. With useCache, a digest cached in DigestFile is returned
// when no file's size or modification time changed since it was computed;
// a computed digest is cached (best effort: a read-only directory just
// goes uncached).
func Digest(dir string, useCache bool) (string, error) {
	stamps := map[string]fileStamp{}
	for _, f := range DataFiles {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return "", fmt.Errorf("%w: %s: %v", ErrNotFound, dir, err)
			}
			return "", err
		}
		stamps[f] = fileStamp{Size: st.Size(), ModTime: st.ModTime().UnixNano()}
	}
	cachePath := filepath.Join(dir, DigestFile)
	if useCache {
		if b, err := os.ReadFile(cachePath); err == nil {
			var c digestCache
			if json.Unmarshal(b, &c) == nil && c.SHA256 != "" && sameStamps(c.Files, stamps) {
				return c.SHA256, nil
			}
		}
	}
	h := sha256.New()
	buf := make([]byte, 1<<20)
	for _, f := range DataFiles {
		if err := digestFile(h, filepath.Join(dir, f), f, buf); err != nil {
			return "", err
		}
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if useCache {
		b, _ := json.Marshal(digestCache{SHA256: sum, Files: stamps})
		tmp := fmt.Sprintf("%s.%d.%d", cachePath, os.Getpid(), time.Now().UnixNano())
		if os.WriteFile(tmp, b, 0o644) == nil {
			if os.Rename(tmp, cachePath) != nil {
				os.Remove(tmp)
			}
		}
	}
	return sum, nil
}

func digestFile(h io.Writer, path, name string, buf []byte) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	var size [8]byte
	binary.LittleEndian.PutUint64(size[:], uint64(st.Size()))
	h.Write([]byte(name))
	h.Write(size[:])
	n, err := io.CopyBuffer(h, f, buf)
	if err != nil {
		return fmt.Errorf("digest %s: %w", path, err)
	}
	if n != st.Size() {
		return fmt.Errorf("digest %s: read %d of %d bytes (the file changed while hashed)", path, n, st.Size())
	}
	return nil
}

func sameStamps(a, b map[string]fileStamp) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range b {
		if a[k] != v {
			return false
		}
	}
	return true
}

// CheckDigest computes dir's digest (see Digest) and returns an error
// wrapping ErrDigestMismatch that names both digests when it is not want.
func CheckDigest(dir, want string, useCache bool) error {
	got, err := Digest(dir, useCache)
	if err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("%w: %s has digest %s, the experiment was planned on %s (regenerate or copy the dataset again)",
			ErrDigestMismatch, dir, got, want)
	}
	return nil
}
