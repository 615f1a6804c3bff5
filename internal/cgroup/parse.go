package cgroup

import (
	"bufio"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
)

// mount is one cgroup mount from /proc/self/mountinfo.
type mount struct {
	Root   string // the path inside the hierarchy that is mounted (field 4)
	Point  string // where it is mounted
	FSType string // "cgroup" or "cgroup2"
	Opts   string // super options: "rw,memory" for a v1 memory mount
}

// parseMountinfo returns the cgroup and cgroup2 mounts of a mountinfo file.
func parseMountinfo(r io.Reader) ([]mount, error) {
	var out []mount
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		// id parent maj:min root point opts [optional...] - fstype source superopts
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		f := strings.Fields(pre)
		g := strings.Fields(post)
		if len(f) < 5 || len(g) < 3 {
			continue
		}
		if g[0] != "cgroup" && g[0] != "cgroup2" {
			continue
		}
		out = append(out, mount{Root: unescape(f[3]), Point: unescape(f[4]), FSType: g[0], Opts: g[2]})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read mountinfo: %w", err)
	}
	return out, nil
}

// unescape decodes mountinfo's octal escapes (\040 for a space).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// hasOpt reports whether a comma-separated option list contains opt.
func hasOpt(opts, opt string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == opt {
			return true
		}
	}
	return false
}

// groupDir maps a cgroup path (as /proc/self/cgroup shows it) to a
// directory under a mount of that hierarchy, or "" when the mount does not
// show that path (a container that mounts a sub-tree).
func groupDir(m mount, cgPath string) string {
	rel := cgPath
	if m.Root != "/" {
		if cgPath != m.Root && !strings.HasPrefix(cgPath, m.Root+"/") {
			return ""
		}
		rel = strings.TrimPrefix(cgPath, m.Root)
	}
	return path.Join(m.Point, rel)
}

// parseKeyed reads "key value" lines (memory.events, memory.oom_control).
func parseKeyed(s, key string) (int64, bool) {
	for _, line := range strings.Split(s, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), " ")
		if ok && k == key {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}
