package osutil

// The memory cgroup this process runs in, read from /proc/self/cgroup: the
// engine samples its usage (engine/metrics) without the cgroup manager
// (internal/cgroup), which only the runner needs. Off Linux there is no
// /proc/self/cgroup and SelfCgroupUsageFile reports ErrNoSelfCgroup.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// ErrNoSelfCgroup reports that this process is not in a memory cgroup
// whose usage can be read (only the root group, or none visible).
var ErrNoSelfCgroup = errors.New("no readable memory cgroup")

// SelfCgroupUsageFile returns the file that holds the memory usage (page
// cache included) of the memory cgroup this process runs in: v2
// memory.current, or v1 memory.usage_in_bytes. It returns ErrNoSelfCgroup
// when there is none; the root group is the whole machine, not a group of
// this process.
func SelfCgroupUsageFile() (string, error) {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrNoSelfCgroup, err)
	}
	defer f.Close()
	own, err := ParseProcCgroups(f)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrNoSelfCgroup, err)
	}
	return selfCgroupUsageFile(own, "/sys/fs/cgroup")
}

// selfCgroupUsageFile resolves the usage file from the parsed
// /proc/self/cgroup under the cgroup mount root (a parameter so tests can
// use a fixture tree).
func selfCgroupUsageFile(own map[string]string, root string) (string, error) {
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
	return "", ErrNoSelfCgroup
}

// ParseProcCgroups parses /proc/self/cgroup: the v1 path per controller
// and the v2 path (key "").
func ParseProcCgroups(r io.Reader) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" {
			out[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read /proc/self/cgroup: %w", err)
	}
	return out, nil
}
