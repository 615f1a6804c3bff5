package metrics

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// clockTicks is USER_HZ, the unit of the CPU times in /proc; it is 100 on
// every Linux architecture Go supports.
const clockTicks = 100

// ErrNoCgroup reports that the process is not in a memory cgroup whose usage
// can be read.
var ErrNoCgroup = errors.New("no readable memory cgroup")

// ProcReadBytes returns read_bytes from /proc/self/io: bytes this process
// caused to be fetched from the block device (page-cache misses of mmap and
// buffered reads count, as do O_DIRECT reads; page-cache hits do not).
func ProcReadBytes() (int64, error) {
	return readKeyed("/proc/self/io", "read_bytes:", 1)
}

// ProcRSSBytes returns the resident set size from /proc/self/status.
func ProcRSSBytes() (int64, error) {
	return readKeyed("/proc/self/status", "VmRSS:", 1024)
}

// ProcPeakRSSBytes returns the peak resident set size (VmHWM) from
// /proc/self/status.
func ProcPeakRSSBytes() (int64, error) {
	return readKeyed("/proc/self/status", "VmHWM:", 1024)
}

// readKeyed finds the line that starts with key in file p and returns its
// first number times mul.
func readKeyed(p, key string, mul int64) (int64, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", p, err)
	}
	for _, line := range bytes.Split(b, []byte{'\n'}) {
		if !bytes.HasPrefix(line, []byte(key)) {
			continue
		}
		f := strings.Fields(string(line[len(key):]))
		if len(f) == 0 {
			break
		}
		v, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parse %s %s: %w", p, key, err)
		}
		return v * mul, nil
	}
	return 0, fmt.Errorf("%s: no %q line", p, key)
}

// ProcCPUSeconds returns the CPU time (user + system) this process has used,
// from /proc/self/stat.
func ProcCPUSeconds() (float64, error) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, fmt.Errorf("read /proc/self/stat: %w", err)
	}
	// The command name (field 2) may hold spaces; fields after the last ')'
	// start at field 3 (state). utime and stime are fields 14 and 15.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("parse /proc/self/stat: no ')'")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, errors.New("parse /proc/self/stat: too few fields")
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("parse /proc/self/stat: %w", err)
	}
	return float64(ut+st) / clockTicks, nil
}

// SystemCPUTimes returns the machine-wide total and iowait jiffies from the
// first line of /proc/stat.
func SystemCPUTimes() (total, iowait int64, err error) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return 0, 0, fmt.Errorf("open /proc/stat: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return 0, 0, errors.New("read /proc/stat: empty")
	}
	fields := strings.Fields(sc.Text())
	if len(fields) < 6 || fields[0] != "cpu" {
		return 0, 0, fmt.Errorf("parse /proc/stat: unexpected first line %q", sc.Text())
	}
	// user nice system idle iowait irq softirq steal (guest is inside user).
	for i, s := range fields[1:] {
		if i >= 8 {
			break
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("parse /proc/stat field %d: %w", i+1, err)
		}
		total += v
		if i == 4 {
			iowait = v
		}
	}
	return total, iowait, nil
}

// MemoryCgroupFile returns the file that holds this process's memory cgroup
// usage, page cache included: cgroup v2 memory.current, or v1
// memory.usage_in_bytes. It returns ErrNoCgroup when there is none.
func MemoryCgroupFile() (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", fmt.Errorf("read /proc/self/cgroup: %w", err)
	}
	return memoryCgroupFile(string(b), "/sys/fs/cgroup")
}

// memoryCgroupFile resolves the usage file from the text of /proc/self/cgroup
// under the cgroup mount root (a parameter so tests can use a fixture tree).
func memoryCgroupFile(procCgroup, root string) (string, error) {
	var v1, v2 string
	for _, line := range strings.Split(procCgroup, "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			v2 = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == "memory" {
				v1 = parts[2]
			}
		}
	}
	// The root cgroup is the whole machine, not a limit on this process.
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
	return "", ErrNoCgroup
}

// ReadInt64File reads a file that holds one decimal integer.
func ReadInt64File(p string) (int64, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", p, err)
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("parse %s: %w", p, err)
	}
	return v, nil
}
