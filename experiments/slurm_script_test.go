package experiments

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/slurm/*.sh from JobScript")

// TestJobScriptGolden compares generated batch scripts with the golden
// files in testdata/slurm/ (go test -run TestJobScriptGolden -update-golden
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
		path := filepath.Join("testdata", "slurm", c.file)
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
	for _, s := range []string{"30", "30:00", "02:00:00", "1-12", "1-12:30", "1-12:30:00"} {
		if err := ValidSlurmTime(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	for _, s := range []string{"", "2h", "1-", ":30", "1:2:3:4", "-5", "1-2-3"} {
		if err := ValidSlurmTime(s); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
}
