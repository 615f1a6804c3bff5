package slurm

// The batch script of a Slurm run (docs/ARCHITECTURE.md "Executors"): one
// job per run, its memory request the run's budget plus the model-step
// allowance, its records written as JSON lines to a file of the run's
// directory (shared storage), one file per execution so that a requeued
// job starts a new file. JobScript is a pure function of JobSpec, tested
// against golden files in testdata/slurm/.

import (
	"fmt"
	"regexp"
	"strings"
)

// JobSpec is everything a run's batch script says.
type JobSpec struct {
	RunID        int64
	ExperimentID int64
	// JobName names the job in squeue; the executor finds its runs' jobs
	// by it after a restart.
	JobName string
	// RunDir is the run's directory on storage the server and the nodes
	// share: config, records files, stderr.
	RunDir string
	// MemMiB is the memory request (--mem, MiB).
	MemMiB int64
	// CPUs per task (--cpus-per-task); 0 leaves Slurm's default.
	CPUs int
	// Time is the time limit (--time); "" leaves the partition's.
	Time string
	// Partition ("" = the cluster's default).
	Partition string
	// Command is the training command; the config path is appended
	// (default: outcore train --config).
	Command []string
	// Outcore is the outcore binary on the nodes, for the dataset
	// commands (data gen, data digest).
	Outcore string
	// Env is exported before the commands run (KEY=VALUE).
	Env []string
	// Dataset is the run's dataset; DataDir the data directory the job
	// reads it from: the shared one, or NodeDataDir's per-node directory.
	Dataset string
	DataDir string
	// NodeData: DataDir is local to each node; the job generates the
	// dataset there (`outcore data gen --like`) when it is missing.
	NodeData bool
	// Digest is the SHA-256 the dataset must have on the node ("" skips
	// the check).
	Digest string
}

// Names of the files of a run's directory that the job writes.
const (
	JobScriptFile   = "job.sh"
	JobStderrFile   = "stderr.log"
	DatasetMetaFile = "dataset-meta.json" // the dataset's meta.json, for --like on a node
)

// RecordsFileName is the records file of one execution of a job
// (SLURM_RESTART_COUNT counts requeues).
func RecordsFileName(jobID string, restart int) string {
	return fmt.Sprintf("records-%s-%d.jsonl", jobID, restart)
}

var (
	envKeyRE  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	jobNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
)

// JobScript writes the batch script of spec.
func JobScript(sp JobSpec) (string, error) {
	for name, v := range map[string]string{"run directory": sp.RunDir, "outcore binary": sp.Outcore,
		"dataset": sp.Dataset, "data directory": sp.DataDir, "job name": sp.JobName} {
		if v == "" {
			return "", fmt.Errorf("job script: no %s", name)
		}
		if strings.ContainsAny(v, "\n\r\x00") {
			return "", fmt.Errorf("job script: %s %q holds a line break", name, v)
		}
	}
	if !jobNameRE.MatchString(sp.JobName) {
		return "", fmt.Errorf("job script: job name %q", sp.JobName)
	}
	if strings.ContainsAny(sp.RunDir, "%") {
		return "", fmt.Errorf("job script: run directory %q holds '%%' (Slurm expands it in file names)", sp.RunDir)
	}
	if strings.ContainsAny(sp.RunDir, "\"\\") {
		return "", fmt.Errorf("job script: run directory %q holds a '\"' or '\\' (an #SBATCH line cannot quote them)", sp.RunDir)
	}
	if sp.MemMiB <= 0 {
		return "", fmt.Errorf("job script: memory request %d MiB", sp.MemMiB)
	}
	if sp.Time != "" {
		if err := ValidTime(sp.Time); err != nil {
			return "", err
		}
	}
	if sp.Partition != "" {
		if err := ValidPartition(sp.Partition); err != nil {
			return "", err
		}
	}
	if sp.Digest != "" && !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(sp.Digest) {
		return "", fmt.Errorf("job script: digest %q is not a hex SHA-256", sp.Digest)
	}
	command := sp.Command
	if len(command) == 0 {
		command = []string{sp.Outcore, "train", "--config"}
	}
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("#!/bin/bash\n")
	w("#SBATCH --job-name=%s\n", sp.JobName)
	// sbatch reads an #SBATCH line's words as a shell would split them:
	// double quotes keep a path with blanks in one word.
	w("#SBATCH --chdir=\"%s\"\n", sp.RunDir)
	w("#SBATCH --output=\"%s/slurm-%%j.out\"\n", sp.RunDir)
	w("#SBATCH --error=\"%s/%s\"\n", sp.RunDir, JobStderrFile)
	w("#SBATCH --open-mode=append\n")
	w("#SBATCH --nodes=1\n")
	w("#SBATCH --ntasks=1\n")
	w("#SBATCH --mem=%dM\n", sp.MemMiB)
	if sp.CPUs > 0 {
		w("#SBATCH --cpus-per-task=%d\n", sp.CPUs)
	}
	if sp.Time != "" {
		w("#SBATCH --time=%s\n", sp.Time)
	}
	if sp.Partition != "" {
		w("#SBATCH --partition=%s\n", sp.Partition)
	}
	w("# outcore run %d of experiment %d (experiments/slurm/script.go). Records go to one\n", sp.RunID, sp.ExperimentID)
	w("# file per execution of the job in the run directory; the server ingests them as they grow.\n")
	w("set -u\n")
	w("run_dir=%s\n", ShellQuote(sp.RunDir))
	w("records=\"$run_dir/records-${SLURM_JOB_ID}-${SLURM_RESTART_COUNT:-0}.jsonl\"\n")
	w("data_dir=%s\n", ShellQuote(sp.DataDir))
	w("outcore=%s\n", ShellQuote(sp.Outcore))
	for _, kv := range sp.Env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !envKeyRE.MatchString(k) {
			return "", fmt.Errorf("job script: environment entry %q is not KEY=VALUE", kv)
		}
		w("export %s=%s\n", k, ShellQuote(v))
	}
	w("export OUTCORE_RUN_ID=%d\n", sp.RunID)
	w("echo \"outcore: Slurm job $SLURM_JOB_ID on $(hostname) (execution ${SLURM_RESTART_COUNT:-0})\" >&2\n")
	ds := ShellQuote(sp.Dataset)
	if sp.NodeData {
		w("# Per-node data directory: generate the dataset here when missing (one job at a time).\n")
		w("if [ ! -f \"$data_dir/datasets/\"%s/meta.json ]; then\n", ds)
		w("  mkdir -p \"$data_dir\" || exit 10\n")
		w("  gen=(\"$outcore\" data gen --like \"$run_dir/%s\" --name %s --data-dir \"$data_dir\" --quiet)\n", DatasetMetaFile, ds)
		w("  if command -v flock >/dev/null 2>&1; then\n")
		w("    flock \"$data_dir/.gen-\"%s.lock sh -c 'm=$1; shift; [ -f \"$m\" ] || exec \"$@\"' _ \"$data_dir/datasets/\"%s/meta.json \"${gen[@]}\" >&2 || exit 10\n", ds, ds)
		w("  else\n")
		w("    \"${gen[@]}\" >&2 || exit 10\n")
		w("  fi\n")
		w("fi\n")
	}
	if sp.Digest != "" {
		w("\"$outcore\" data digest %s --data-dir \"$data_dir\" --check %s >&2 || exit 11\n", ds, sp.Digest)
	}
	var cmd []string
	for _, a := range command {
		cmd = append(cmd, ShellQuote(a))
	}
	w("exec %s \"$run_dir/config.json\" >>\"$records\"\n", strings.Join(cmd, " "))
	return b.String(), nil
}
