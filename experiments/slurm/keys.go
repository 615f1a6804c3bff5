package slurm

// The pure checks of a grid's Slurm settings (GridOptions) and of the
// queue's Slurm flags: time limits and partitions in sbatch's forms, and a
// node data directory's syntax (the executor confines it to a folder,
// experiments/slurm/node_data_dir.go).

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

var (
	timeRE      = regexp.MustCompile(`^(\d+-)?\d+(:\d+(:\d+)?)?$|^\d+-\d+$`)
	partitionRE = regexp.MustCompile(`^[A-Za-z0-9_.,-]+$`)
)

// ValidTime checks a time limit in one of sbatch's forms: "minutes",
// "minutes:seconds", "hours:minutes:seconds", "days-hours",
// "days-hours:minutes", "days-hours:minutes:seconds".
// The limit is at most MaxTimeDays days.
func ValidTime(s string) error {
	if !timeRE.MatchString(s) {
		return fmt.Errorf("time limit %q: want minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS", s)
	}
	if m, ok := timeMinutes(s); !ok || m > MaxTimeDays*24*60 {
		return fmt.Errorf("time limit %q: at most %d days", s, MaxTimeDays)
	}
	return nil
}

// MaxTimeDays bounds a time limit (slurm.time, --slurm-time).
const MaxTimeDays = 366

// timeMinutes is a time limit that matches timeRE in whole minutes
// (seconds rounded down); ok is false when a number does not fit.
func timeMinutes(s string) (int64, bool) {
	days := int64(0)
	rest := s
	hasDays := false
	if d, r, cut := strings.Cut(s, "-"); cut {
		n, err := strconv.ParseInt(d, 10, 32)
		if err != nil {
			return 0, false
		}
		days, rest, hasDays = n, r, true
	}
	var f []int64
	for _, p := range strings.Split(rest, ":") {
		n, err := strconv.ParseInt(p, 10, 32)
		if err != nil {
			return 0, false
		}
		f = append(f, n)
	}
	var h, m int64
	switch {
	case hasDays: // D-H, D-H:M, D-H:M:S
		h = f[0]
		if len(f) > 1 {
			m = f[1]
		}
	case len(f) == 3: // H:M:S
		h, m = f[0], f[1]
	default: // M, M:S
		m = f[0]
	}
	if len(f) > 0 && f[len(f)-1] > 0 && (len(f) == 3 || !hasDays && len(f) == 2) {
		m += f[len(f)-1] / 60
	}
	return days*24*60 + h*60 + m, true
}

// ValidPartition checks a partition name (or comma-separated list).
func ValidPartition(s string) error {
	if !partitionRE.MatchString(s) {
		return fmt.Errorf("partition %q: want letters, digits, '_', '.', '-' (comma-separated for several)", s)
	}
	return nil
}

// NodeDataDirSyntax checks a node data directory without the file system:
// absolute, no "..", no control characters, no '%' (Slurm expands it).
func NodeDataDirSyntax(p string) error {
	if !filepath.IsAbs(p) {
		return fmt.Errorf("%q is not an absolute path", p)
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return fmt.Errorf("%q: no \"..\" allowed", p)
		}
	}
	if strings.IndexFunc(p, func(r rune) bool { return unicode.IsControl(r) || r == '%' || r == unicode.ReplacementChar }) >= 0 {
		return fmt.Errorf("%q holds a control character, '%%' or invalid UTF-8", p)
	}
	if len(p) > 1024 {
		return fmt.Errorf("a path of %d bytes, at most 1024", len(p))
	}
	return nil
}
