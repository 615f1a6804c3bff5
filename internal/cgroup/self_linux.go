package cgroup

import (
	"os"
	"path/filepath"
	"strings"

	"outcore/internal/osutil"
)

// SelfLimit returns the memory limit of the memory cgroup this process runs
// in (v2 memory.max, v1 memory.limit_in_bytes) and whether one is set: a
// group without a limit ("max", or v1's huge sentinel) reports false.
func SelfLimit() (int64, bool) {
	usage, err := osutil.SelfCgroupUsageFile()
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
