package slurm

// The sbatch options a grid ("slurm": {"args": ...}) or the server's
// --slurm-args may add to a job (docs/ARCHITECTURE.md "Executors",
// docs/SECURITY.md): an allow-list, each option with a validated value.
// Everything that decides what the job runs, where it reads and writes or
// which environment it gets (--export, --chdir, --output, --wrap, --uid,
// ...) is outcore's alone: an option that set BASH_ENV through --export
// ran a command of the grid's choosing in the job. Values are plain words
// (no shell metacharacters, no paths): they reach sbatch as argv words,
// never a shell, and never the job script.

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"outcore/internal/units"
)

// sbatchValue checks the value of one allowed option ("" for a flag).
type sbatchValue func(v string) error

var (
	sbatchNameRE  = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)
	sbatchWordsRE = regexp.MustCompile(`^[A-Za-z0-9 _.,:@+=-]{1,200}$`)
	sbatchFeatRE  = regexp.MustCompile(`^[A-Za-z0-9_.,:-]{1,200}$`)
	sbatchGresRE  = regexp.MustCompile(`^[A-Za-z0-9_.,:-]{1,200}$`)
	sbatchHostsRE = regexp.MustCompile(`^[A-Za-z0-9_.,\[\]-]{1,500}$`)
	sbatchSizeRE  = regexp.MustCompile(`^[0-9]{1,9}[KMGT]?$`)
)

func sbatchMatch(re *regexp.Regexp, what string) sbatchValue {
	return func(v string) error {
		if !re.MatchString(v) {
			return fmt.Errorf("want %s", what)
		}
		return nil
	}
}

func sbatchIntRange(lo, hi int) sbatchValue {
	return func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < lo || n > hi {
			return fmt.Errorf("want a whole number from %d to %d", lo, hi)
		}
		return nil
	}
}

func sbatchOneOf(words ...string) sbatchValue {
	return func(v string) error {
		for _, w := range words {
			if v == w {
				return nil
			}
		}
		return fmt.Errorf("want one of %s", strings.Join(words, ", "))
	}
}

// sbatchAllowed are the options a job may be given, by long name; a nil
// check marks a flag that takes no value.
var sbatchAllowed = map[string]sbatchValue{
	"account":       sbatchMatch(sbatchNameRE, "an account name (letters, digits, '_', '.', '-')"),
	"qos":           sbatchMatch(sbatchNameRE, "a QOS name (letters, digits, '_', '.', '-')"),
	"reservation":   sbatchMatch(sbatchNameRE, "a reservation name (letters, digits, '_', '.', '-')"),
	"wckey":         sbatchMatch(sbatchNameRE, "a wckey (letters, digits, '_', '.', '-')"),
	"comment":       sbatchMatch(sbatchWordsRE, "words of letters, digits, blanks and _ . , : @ + = - (at most 200)"),
	"constraint":    sbatchMatch(sbatchFeatRE, "node features of letters, digits and _ . , : -"),
	"gres":          sbatchMatch(sbatchGresRE, `a resource list such as "gpu:1"`),
	"gpus":          sbatchMatch(sbatchGresRE, `a GPU count such as "1" or "a100:1"`),
	"gpus-per-node": sbatchMatch(sbatchGresRE, `a GPU count such as "1" or "a100:1"`),
	"nodelist":      sbatchMatch(sbatchHostsRE, `a host list such as "node[1-4],gpu2"`),
	"exclude":       sbatchMatch(sbatchHostsRE, `a host list such as "node[1-4],gpu2"`),
	"nice":          sbatchIntRange(0, 10000),
	"tmp":           sbatchMatch(sbatchSizeRE, `a size in MiB or with a unit K, M, G, T ("20G")`),
	"hint":          sbatchOneOf("compute_bound", "memory_bound", "multithread", "nomultithread"),
	"exclusive":     nil,
	"requeue":       nil,
	"no-requeue":    nil,
}

// sbatchRefused says why some well-known options are not on the list.
var sbatchRefused = map[string]string{
	"export":        "outcore sets the job's environment",
	"export-file":   "outcore sets the job's environment",
	"get-user-env":  "outcore sets the job's environment",
	"propagate":     "outcore sets the job's environment",
	"chdir":         "outcore chooses the job's directory and files",
	"output":        "outcore chooses the job's directory and files",
	"error":         "outcore chooses the job's directory and files",
	"input":         "outcore chooses the job's directory and files",
	"open-mode":     "outcore chooses the job's directory and files",
	"wrap":          "outcore writes the job script",
	"uid":           "jobs run as the user who runs outcore",
	"gid":           "jobs run as the user who runs outcore",
	"job-name":      "outcore names jobs to find them again",
	"mem":           "outcore computes the memory request from the run's budget (slurm.mem_allowance adjusts it)",
	"mem-per-cpu":   "outcore computes the memory request from the run's budget (slurm.mem_allowance adjusts it)",
	"cpus-per-task": "give slurm.cpus (--slurm-cpus)",
	"time":          "give slurm.time (--slurm-time)",
	"partition":     "give slurm.partition (--slurm-partition)",
	"nodes":         "a run is one task on one node",
	"ntasks":        "a run is one task on one node",
	"array":         "a run is one job",
	"dependency":    "the queue orders the runs",
}

// sbatchAllowedNames lists the allowed options, for messages.
func sbatchAllowedNames() string {
	names := make([]string, 0, len(sbatchAllowed))
	for n := range sbatchAllowed {
		names = append(names, "--"+n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// CheckSbatchArg checks one extra sbatch argument against the allow-list:
// "--name=value" for an option with a value, "--name" for a flag.
func CheckSbatchArg(a string) error {
	if !strings.HasPrefix(a, "--") {
		if strings.HasPrefix(a, "-") {
			return fmt.Errorf("sbatch option %q: write the long form --name=value", a)
		}
		return fmt.Errorf("%q is not an sbatch option (options start with '-'; outcore writes the job script)", a)
	}
	name, value, hasValue := strings.Cut(a[2:], "=")
	check, ok := sbatchAllowed[name]
	if !ok {
		if why, known := sbatchRefused[name]; known {
			return fmt.Errorf("sbatch option --%s is not allowed: %s", name, why)
		}
		return fmt.Errorf("sbatch option %q is not allowed (allowed: %s)", units.Clip(a, 40), sbatchAllowedNames())
	}
	if check == nil {
		if hasValue {
			return fmt.Errorf("sbatch option --%s takes no value", name)
		}
		return nil
	}
	if !hasValue {
		return fmt.Errorf("sbatch option --%s needs a value: write --%s=VALUE", name, name)
	}
	if err := check(value); err != nil {
		return fmt.Errorf("sbatch option --%s=%q: %v", name, units.Clip(value, 40), err)
	}
	return nil
}

// ParseSbatchArgs splits extra sbatch arguments (SplitArgs) and checks
// each against the allow-list (CheckSbatchArg).
func ParseSbatchArgs(s string) ([]string, error) {
	args, err := SplitArgs(s)
	if err != nil {
		return nil, err
	}
	for _, a := range args {
		if err := CheckSbatchArg(a); err != nil {
			return nil, err
		}
	}
	return args, nil
}

// SplitArgs splits extra sbatch arguments as a POSIX shell would split
// words: blanks separate, single quotes keep everything, double quotes keep
// everything but \" and \\, a backslash outside quotes escapes the next
// character. No expansion of any kind happens. Each word must be an option
// (start with '-'): the script is outcore's.
func SplitArgs(s string) ([]string, error) {
	var args []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				args = append(args, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			inWord = true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated ' in %q", s)
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			inWord = true
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("unterminated \" in %q", s)
			}
		case c == '\\':
			inWord = true
			if i+1 >= len(s) {
				return nil, fmt.Errorf("%q ends with a backslash", s)
			}
			i++
			cur.WriteByte(s[i])
		default:
			inWord = true
			cur.WriteByte(c)
		}
	}
	if inWord {
		args = append(args, cur.String())
	}
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			return nil, fmt.Errorf("%q is not an sbatch option (options start with '-'; outcore writes the job script)", a)
		}
	}
	return args, nil
}

// ShellQuote quotes s for a POSIX shell (SplitArgs reads it back): 'it'\”s'.
func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
