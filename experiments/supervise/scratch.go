package supervise

import (
	"fmt"
	"os"
	"path/filepath"
)

// RemoveScratch removes the per-run scratch folders a child with pid left
// in dir: "<anything>-run-<pid>-<suffix>" (a variant makes them with
// os.MkdirTemp(dir, "<variant>-run-<pid>-"), engine/system/ginex). A child
// that ends normally removes its own; one killed for memory cannot, so
// the supervisor does, whatever the outcome. It returns the folders
// removed and the first error; an empty dir or pid does nothing.
func RemoveScratch(dir string, pid int) ([]string, error) {
	if dir == "" || pid <= 0 {
		return nil, nil
	}
	matches, err := filepath.Glob(filepath.Join(dir, fmt.Sprintf("*-run-%d-*", pid)))
	if err != nil {
		return nil, err
	}
	var removed []string
	var first error
	for _, m := range matches {
		st, err := os.Lstat(m)
		if err != nil || !st.IsDir() {
			continue // only folders: a file by that name is someone else's
		}
		if err := os.RemoveAll(m); err != nil {
			if first == nil {
				first = fmt.Errorf("remove scratch folder %s: %w", m, err)
			}
			continue
		}
		removed = append(removed, m)
	}
	return removed, first
}
