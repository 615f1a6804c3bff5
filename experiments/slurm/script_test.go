package slurm

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/*.sh from JobScript")

// TestJobScriptGolden compares generated batch scripts with the golden
// files in testdata/ (go test -run TestJobScriptGolden -update-golden
// rewrites them) and checks that bash parses each.
func TestJobScriptGolden(t *testing.T) {
	digest := strings.Repeat("ab", 32)
	cases := []struct {
		file string
		spec JobSpec
	}{
		{"job-shared.sh", JobSpec{RunID: 7, ExperimentID: 2, JobName: "oc1a2b3c4d-r7", RunDir: "/shared/outcore/runs/7",
			MemMiB: 1280, CPUs: 2, Time: "02:00:00", Partition: "gpu", Outcore: "/shared/bin/outcore",
			Dataset: "papers-like", DataDir: "/shared/outcore", Digest: digest}},
		{"job-node.sh", JobSpec{RunID: 8, ExperimentID: 2, JobName: "oc1a2b3c4d-r8", RunDir: "/shared/outcore/runs/8",
			MemMiB: 640, Outcore: "/opt/outcore/bin/outcore", Env: []string{"OUTCORE_GEMM=gonum", "NOTE=it's quoted"},
			Dataset: "tiny", DataDir: "/scratch/outcore", NodeData: true, Digest: digest}},
		{"job-command.sh", JobSpec{RunID: 9, ExperimentID: 3, JobName: "oc1a2b3c4d-r9", RunDir: "/tmp/d/runs/9",
			MemMiB: 100, Time: "1-12", Outcore: "/tmp/bin/outcore", Command: []string{"/tmp/x.test", "-test.run=^$", "--"},
			Dataset: "tiny", DataDir: "/tmp/d"}},
	}
	for _, c := range cases {
		got, err := JobScript(c.spec)
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		path := filepath.Join("testdata", c.file)
		if *updateGolden {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run with -update-golden to create it)", err)
		}
		if got != string(want) {
			t.Errorf("%s differs from JobScript's output:\n%s", path, got)
		}
		if bash, err := exec.LookPath("bash"); err == nil {
			if out, err := exec.Command(bash, "-n", path).CombinedOutput(); err != nil {
				t.Errorf("bash -n %s: %v\n%s", path, err, out)
			}
		}
	}
}

func TestJobScriptRejects(t *testing.T) {
	ok := JobSpec{RunID: 1, JobName: "oc-r1", RunDir: "/d/runs/1", MemMiB: 100, Outcore: "/bin/outcore", Dataset: "tiny", DataDir: "/d"}
	if _, err := JobScript(ok); err != nil {
		t.Fatalf("valid spec: %v", err)
	}
	for _, c := range []struct {
		name string
		mod  func(*JobSpec)
		want string
	}{
		{"no memory", func(s *JobSpec) { s.MemMiB = 0 }, "memory request"},
		{"bad time", func(s *JobSpec) { s.Time = "2h" }, `time limit "2h"`},
		{"bad partition", func(s *JobSpec) { s.Partition = "a b" }, `partition "a b"`},
		{"newline in run dir", func(s *JobSpec) { s.RunDir = "/d\n#SBATCH --x" }, "line break"},
		{"percent in run dir", func(s *JobSpec) { s.RunDir = "/d/%j" }, "'%'"},
		{"bad env", func(s *JobSpec) { s.Env = []string{"1X=2"} }, "not KEY=VALUE"},
		{"bad digest", func(s *JobSpec) { s.Digest = "xyz" }, "not a hex SHA-256"},
		{"no binary", func(s *JobSpec) { s.Outcore = "" }, "no outcore binary"},
		{"bad job name", func(s *JobSpec) { s.JobName = "a b" }, "job name"},
	} {
		s := ok
		c.mod(&s)
		if _, err := JobScript(s); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.name, err, c.want)
		}
	}
}

func TestValidSlurmTime(t *testing.T) {
	for _, s := range []string{"30", "30:00", "02:00:00", "1-12", "1-12:30", "1-12:30:00", "366-00", "527040", "8784:00:00"} {
		if err := ValidTime(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	for _, s := range []string{"", "2h", "1-", ":30", "1:2:3:4", "-5", "1-2-3", "367-00", "527041", "99999999999", "366-23:59:59"} {
		if err := ValidTime(s); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
}

// TestJobScriptPathsWithBlanks runs a job script through bash with a data
// directory, a run directory, a node data directory and binaries whose
// paths hold blanks and quotes: every command gets its paths whole, the
// records land in the run directory, and the #SBATCH lines split (as sbatch
// splits them) into one word per option. (Before, "--chdir=/a b/runs/7"
// split in two and every job of such a data directory failed.)
func TestJobScriptPathsWithBlanks(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	root := filepath.Join(t.TempDir(), "it's a dir")
	dataDir := filepath.Join(root, "data dir")
	nodeDir := filepath.Join(root, "node $HOME dir")
	runDir := filepath.Join(dataDir, "runs", "db 1", "7")
	binDir := filepath.Join(root, "bin dir")
	for _, d := range []string{runDir, binDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	argLog := filepath.Join(root, "args.log")
	// The stub outcore logs its arguments one per line; `data gen` makes
	// the dataset's meta.json under --data-dir.
	outcore := filepath.Join(binDir, "out core")
	stub := `#!/bin/bash
for a in "$@"; do printf '%s\n' "$a" >>"$ARG_LOG"; done
echo -- >>"$ARG_LOG"
if [ "$1 $2" = "data gen" ]; then
  while [ $# -gt 0 ]; do case "$1" in --data-dir) dd="$2"; shift;; --name) nm="$2"; shift;; esac; shift; done
  mkdir -p "$dd/datasets/$nm" && echo '{}' >"$dd/datasets/$nm/meta.json"
fi
`
	trainer := filepath.Join(binDir, "train er")
	train := `#!/bin/bash
[ -f "$1" ] || { echo "no config at $1" >&2; exit 3; }
echo '{"type":"epoch","epoch":0}'
`
	for p, body := range map[string]string{outcore: stub, trainer: train} {
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(runDir, "config.json"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script, err := JobScript(JobSpec{RunID: 7, ExperimentID: 1, JobName: "oc-r7", RunDir: runDir, MemMiB: 100,
		Outcore: outcore, Command: []string{trainer}, Dataset: "tiny", DataDir: nodeDir, NodeData: true,
		Digest: strings.Repeat("ab", 32)})
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(script, "\n") {
		rest, ok := strings.CutPrefix(line, "#SBATCH ")
		if !ok {
			continue
		}
		words, err := SplitArgs(rest)
		if err != nil || len(words) != 1 {
			t.Errorf("%s: splits into %q (%v), want one word", line, words, err)
		}
		if strings.Contains(rest, runDir) && !strings.Contains(words[0], runDir) {
			t.Errorf("%s: the run directory is not whole in %q", line, words[0])
		}
	}
	path := filepath.Join(runDir, "job.sh")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bash, path)
	cmd.Dir = runDir
	cmd.Env = append(os.Environ(), "SLURM_JOB_ID=42", "ARG_LOG="+argLog)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("bash job.sh: %v\n%s", err, out)
	}
	recs, err := os.ReadFile(filepath.Join(runDir, "records-42-0.jsonl"))
	if err != nil || !strings.Contains(string(recs), `"type":"epoch"`) {
		t.Fatalf("records file: %q %v", recs, err)
	}
	if _, err := os.Stat(filepath.Join(nodeDir, "datasets", "tiny", "meta.json")); err != nil {
		t.Fatalf("the dataset was not generated in the node data directory: %v", err)
	}
	b, _ := os.ReadFile(argLog)
	calls := strings.Split(strings.TrimSuffix(string(b), "--\n"), "--\n")
	if len(calls) != 2 {
		t.Fatalf("outcore was called %d times, want data gen and data digest:\n%s", len(calls), b)
	}
	gen := strings.Split(strings.TrimSpace(calls[0]), "\n")
	wantGen := []string{"data", "gen", "--like", filepath.Join(runDir, DatasetMetaFile), "--name", "tiny", "--data-dir", nodeDir, "--quiet"}
	if strings.Join(gen, "|") != strings.Join(wantGen, "|") {
		t.Errorf("data gen got %q, want %q", gen, wantGen)
	}
	digest := strings.Split(strings.TrimSpace(calls[1]), "\n")
	wantDigest := []string{"data", "digest", "tiny", "--data-dir", nodeDir, "--check", strings.Repeat("ab", 32)}
	if strings.Join(digest, "|") != strings.Join(wantDigest, "|") {
		t.Errorf("data digest got %q, want %q", digest, wantDigest)
	}
}
