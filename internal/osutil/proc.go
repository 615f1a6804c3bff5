package osutil

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The parsers of /proc text, pure so that tests feed them fixtures
// (testdata/); the _linux.go readers give them the live files.

// clockTicks is USER_HZ, the unit of the CPU times in /proc; it is 100 on
// every Linux architecture Go supports.
const clockTicks = 100

// ParseKeyed finds the line of text that starts with key (as in
// /proc/self/status "VmRSS:" or /proc/self/io "read_bytes:") and returns
// its first number times mul (1024 for the kB fields of status and
// meminfo).
func ParseKeyed(text []byte, key string, mul int64) (int64, error) {
	for _, line := range bytes.Split(text, []byte{'\n'}) {
		if !bytes.HasPrefix(line, []byte(key)) {
			continue
		}
		f := strings.Fields(string(line[len(key):]))
		if len(f) == 0 {
			return 0, fmt.Errorf("%q line without a value", key)
		}
		v, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%q: %w", key, err)
		}
		return v * mul, nil
	}
	return 0, fmt.Errorf("no %q line", key)
}

// ParseProcStatCPU returns the user + system CPU seconds of a process from
// the text of /proc/<pid>/stat.
func ParseProcStatCPU(b []byte) (float64, error) {
	// The command name (field 2) may hold spaces and parentheses; the fields
	// after the last ')' start at field 3 (state). utime and stime are
	// fields 14 and 15.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("no ')' after the command name")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("%d fields after the command name, want at least 13", len(f))
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return float64(ut+st) / clockTicks, nil
}

// CPUStat is the first ("cpu") line of /proc/stat in jiffies.
type CPUStat struct {
	Total  int64 // every field up to steal (guest time is inside user)
	Idle   int64 // idle + iowait
	IOWait int64
	Steal  int64
}

// ParseCPUStat reads the machine-wide "cpu" line of /proc/stat (old
// kernels have no iowait or steal fields; they count as 0).
func ParseCPUStat(b []byte) (CPUStat, error) {
	var st CPUStat
	line, _, _ := bytes.Cut(b, []byte{'\n'})
	f := strings.Fields(string(line))
	if len(f) < 5 || f[0] != "cpu" {
		return st, fmt.Errorf("/proc/stat: unexpected first line %q", trimForError(line))
	}
	// user nice system idle iowait irq softirq steal
	for i, s := range f[1:min(len(f), 9)] {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 0 || v > math.MaxInt64-st.Total {
			return CPUStat{}, fmt.Errorf("/proc/stat: cpu field %d %q is not a count", i+1, trimForError([]byte(s)))
		}
		st.Total += v
		switch i {
		case 3:
			st.Idle += v
		case 4:
			st.Idle += v
			st.IOWait = v
		case 7:
			st.Steal = v
		}
	}
	return st, nil
}

// trimForError keeps an error's quote of outside input short.
func trimForError(b []byte) string {
	if len(b) > 64 {
		b = b[:64]
	}
	return string(b)
}

// ParseSystemCPU returns the machine-wide total and iowait jiffies from the
// text of /proc/stat (its first, "cpu" line).
func ParseSystemCPU(b []byte) (total, iowait int64, err error) {
	st, err := ParseCPUStat(b)
	return st.Total, st.IOWait, err
}

// ParseInt64 parses a file's text that holds one decimal integer (as
// cgroup counters do).
func ParseInt64(b []byte) (int64, error) {
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}

// ParseTaskState returns the state letter of a /proc/PID/stat or
// /proc/PID/task/TID/stat line ("R" running, "S" sleeping, "D"
// uninterruptible, usually I/O, "T" stopped by a signal, "t" stopped by a
// tracer, "Z" zombie, ...): the field after the command name, which is
// in parentheses and may hold spaces and parentheses itself.
func ParseTaskState(stat []byte) (byte, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) || stat[i+1] != ' ' {
		return 0, fmt.Errorf("stat line without a state: %q", trimForError(stat))
	}
	return stat[i+2], nil
}

// TaskStates returns the state letter of each thread of the process whose
// /proc directory is procDir ("/proc/PID"), read from task/*/stat, and
// the state of the process itself (its stat). A thread that ended while
// they were read is left out; a process that is gone is an error
// (fs.ErrNotExist).
func TaskStates(procDir string) (process byte, threads []byte, err error) {
	b, err := os.ReadFile(filepath.Join(procDir, "stat"))
	if err != nil {
		return 0, nil, err
	}
	if process, err = ParseTaskState(b); err != nil {
		return 0, nil, err
	}
	ents, err := os.ReadDir(filepath.Join(procDir, "task"))
	if err != nil {
		return process, nil, err
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(procDir, "task", e.Name(), "stat"))
		if err != nil {
			continue // the thread ended
		}
		if s, err := ParseTaskState(b); err == nil {
			threads = append(threads, s)
		}
	}
	return process, threads, nil
}
