package lint

// The executor seam's rule (docs/ARCHITECTURE.md "Executors", "Adding an
// executor"): the words of the Slurm executor — Slurm itself, its tools,
// its partitions and job scripts — appear in its own package
// (experiments/slurm) alone. Outside it, the queue's one wiring line (the
// blank import of experiments/executors_wiring.go) may name its package;
// tests and documents may name it freely. Every other executor keeps its
// words at home the same way: the queue, the grid, the store, the CLI and
// the dashboard speak the seam's words (experiments/executors).

import (
	"regexp"
	"strings"
)

// ExecutorHome is the Slurm executor's package directory, and
// ExecutorWiring the one file outside it that may import it.
const (
	ExecutorHome   = "experiments/slurm/"
	ExecutorWiring = "experiments/executors_wiring.go"
)

var (
	// executorWords are the Slurm executor's words, anywhere in a line.
	executorWords = regexp.MustCompile(`(?i)slurm|\b(sbatch|squeue|scontrol|sacct|scancel|srun|salloc|sinfo)\b|\bjob[ _-]?scripts?\b`)
	// partitionWord is Slurm's partition, refused in the packages around
	// the queue (the engine's graph partitions are another thing).
	partitionWord = regexp.MustCompile(`(?i)partition`)
	// wiringLine is the blank import of the executor's package.
	wiringLine = regexp.MustCompile(`^(_\s+)?"outcore/experiments/slurm"$`)
)

// partitionScoped are the directories where "partition" can only be
// Slurm's.
var partitionScoped = []string{"experiments/", "store/", "web/", "cmd/outcore/cli/"}

// ExecutorWordViolations lists the lines of one non-test Go file (rel:
// its path from the repository root, with '/') that speak the Slurm
// executor's words outside its package, one "file:line: text" each.
func ExecutorWordViolations(rel string, src []byte) []string {
	if strings.HasPrefix(rel, ExecutorHome) || strings.HasPrefix(rel, "internal/lint/") {
		return nil
	}
	scoped := false
	for _, d := range partitionScoped {
		scoped = scoped || strings.HasPrefix(rel, d)
	}
	var out []string
	for i, line := range strings.Split(string(src), "\n") {
		t := strings.TrimSpace(line)
		if rel == ExecutorWiring && wiringLine.MatchString(t) {
			continue
		}
		if executorWords.MatchString(line) || scoped && partitionWord.MatchString(line) {
			out = append(out, rel+":"+itoa(i+1)+": "+t)
		}
	}
	return out
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}
