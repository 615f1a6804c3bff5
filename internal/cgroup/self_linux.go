package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"outcore/internal/osutil"
)

// ErrNoSelfGroup reports that this process is not in a memory cgroup whose
// usage can be read (only the root group, or none visible).
var ErrNoSelfGroup = errors.New("no readable memory cgroup")

// SelfUsageFile returns the file that holds the memory usage (page cache
// included) of the memory cgroup this process runs in: v2 memory.current,
// or v1 memory.usage_in_bytes. It returns ErrNoSelfGroup when there is
// none; the root group is the whole machine, not a group of this process.
func SelfUsageFile() (string, error) {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrNoSelfGroup, err)
	}
	defer f.Close()
	own, err := procCgroups(f)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrNoSelfGroup, err)
	}
	return selfUsageFile(own, "/sys/fs/cgroup")
}

// selfUsageFile resolves the usage file from the parsed /proc/self/cgroup
// under the cgroup mount root (a parameter so tests can use a fixture tree).
func selfUsageFile(own map[string]string, root string) (string, error) {
	v1, v2 := own["memory"], own[""]
	if v1 == "/" {
		v1 = ""
	}
	if v2 == "/" {
		v2 = ""
	}
	var cands []string
	if v1 != "" {
		cands = append(cands, filepath.Join(root, "memory", v1, "memory.usage_in_bytes"))
	}
	if v2 != "" {
		cands = append(cands,
			filepath.Join(root, v2, "memory.current"),
			filepath.Join(root, "unified", v2, "memory.current"))
	}
	for _, c := range cands {
		if _, err := os.Stat(c); err == nil {
			return c, nil
		}
	}
	return "", ErrNoSelfGroup
}

// SelfLimit returns the memory limit of the memory cgroup this process runs
// in (v2 memory.max, v1 memory.limit_in_bytes) and whether one is set: a
// group without a limit ("max", or v1's huge sentinel) reports false.
func SelfLimit() (int64, bool) {
	usage, err := SelfUsageFile()
	if err != nil {
		return 0, false
	}
	return limitIn(filepath.Dir(usage))
}

// limitIn reads the memory limit of the group at dir.
func limitIn(dir string) (int64, bool) {
	for _, f := range []string{"memory.max", "memory.limit_in_bytes"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			continue
		}
		if strings.TrimSpace(string(b)) == "max" {
			return 0, false
		}
		v, err := osutil.ParseInt64(b)
		if err != nil || v <= 0 || v >= 1<<62 {
			return 0, false
		}
		return v, true
	}
	return 0, false
}
