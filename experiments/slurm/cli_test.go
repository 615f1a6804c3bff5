package slurm

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestParseSbatch(t *testing.T) {
	for _, c := range []struct {
		in, id string
		ok     bool
	}{{"123\n", "123", true}, {"123;cluster\n", "123", true}, {"sbatch: warning: x\n77\n", "77", true},
		{"", "", false}, {"Submitted batch job 12\n", "", false}, {"12a", "", false}} {
		id, err := ParseSbatch(c.in)
		if id != c.id || (err == nil) != c.ok {
			t.Errorf("ParseSbatch(%q) = %q, %v; want %q (ok %v)", c.in, id, err, c.id, c.ok)
		}
	}
}

// TestParseSqueue reads squeue output captured from scripts/slurm-local.sh's
// cluster, and names holding the separator.
func TestParseSqueue(t *testing.T) {
	b, err := os.ReadFile("testdata/squeue.txt")
	if err != nil {
		t.Fatal(err)
	}
	jobs := ParseSqueue(string(b))
	if len(jobs) != 5 {
		t.Fatalf("%d jobs from testdata/squeue.txt, want 5: %+v", len(jobs), jobs)
	}
	want := JobInfo{ID: "3", Name: "j.sh", State: "CANCELLED", Node: "", Reason: "Resources", Restarts: -1, Known: true}
	if jobs[1] != want {
		t.Errorf("line 2: %+v, want %+v", jobs[1], want)
	}
	got := ParseSqueue("17|a|b|RUNNING|node[1-2]|None\nnot a job line\n18_3|x|pending||Priority\n")
	wantJobs := []JobInfo{
		{ID: "17", Name: "a|b", State: "RUNNING", Node: "node[1-2]", Reason: "None", Restarts: -1, Known: true},
		{ID: "18_3", Name: "x", State: "PENDING", Node: "", Reason: "Priority", Restarts: -1, Known: true},
	}
	if !reflect.DeepEqual(got, wantJobs) {
		t.Errorf("ParseSqueue: %+v, want %+v", got, wantJobs)
	}
}

func TestParseScontrolJob(t *testing.T) {
	for _, c := range []struct {
		file string
		want JobInfo
	}{
		{"scontrol-completed.txt", JobInfo{ID: "1", Name: "j.sh", State: "COMPLETED", Node: "vm", Reason: "None", ExitCode: "0:0", Restarts: 0, Known: true}},
		{"scontrol-cancelled.txt", JobInfo{ID: "4", Name: "j.sh", State: "CANCELLED", Node: "vm", Reason: "None", ExitCode: "0:15", Restarts: 0, Known: true}},
		{"scontrol-requeued-completed.txt", JobInfo{ID: "5", Name: "j.sh", State: "COMPLETED", Node: "vm", Reason: "None", ExitCode: "0:0", Restarts: 1, Known: true}},
	} {
		b, err := os.ReadFile("testdata/" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := ParseScontrolJob(string(b))
		if !ok || got != c.want {
			t.Errorf("%s: %+v (ok %v), want %+v", c.file, got, ok, c.want)
		}
	}
	pending, ok := ParseScontrolJob("JobId=9 JobName=my job name JobState=PENDING Reason=Resources NodeList=(null) ExitCode=0:0")
	if !ok || pending.Name != "my job name" || pending.Node != "" || pending.Reason != "Resources" || pending.Restarts != -1 {
		t.Errorf("pending job: %+v (ok %v)", pending, ok)
	}
	if _, ok := ParseScontrolJob("slurm_load_jobs error: Invalid job id specified"); ok {
		t.Error("an error message parsed as a job")
	}
}

func TestParseSacct(t *testing.T) {
	out := "12|oc-r1|COMPLETED|0:0|vm\n12.batch|batch|COMPLETED|0:0|vm\n13|oc-r2|CANCELLED by 0|0:15|None assigned\n14|n|OUT_OF_MEMORY|0:125|n3\n"
	want := []JobInfo{
		{ID: "12", Name: "oc-r1", State: "COMPLETED", ExitCode: "0:0", Node: "vm", Restarts: -1, Known: true},
		{ID: "13", Name: "oc-r2", State: "CANCELLED", ExitCode: "0:15", Node: "", Restarts: -1, Known: true},
		{ID: "14", Name: "n", State: "OUT_OF_MEMORY", ExitCode: "0:125", Node: "n3", Restarts: -1, Known: true},
	}
	if got := ParseSacct(out); !reflect.DeepEqual(got, want) {
		t.Errorf("ParseSacct: %+v, want %+v", got, want)
	}
}

func FuzzParseSqueue(f *testing.F) {
	if b, err := os.ReadFile("testdata/squeue.txt"); err == nil {
		f.Add(string(b))
	}
	f.Add("17|a|b|RUNNING|node[1-2]|None\n")
	f.Fuzz(func(t *testing.T, s string) {
		for _, j := range ParseSqueue(s) {
			if !jobIDRE.MatchString(j.ID) || !j.Known || strings.ContainsAny(j.State, " \n") {
				t.Fatalf("bad job %+v from %q", j, s)
			}
		}
	})
}

func FuzzParseScontrolJob(f *testing.F) {
	for _, name := range []string{"scontrol-completed.txt", "scontrol-cancelled.txt"} {
		if b, err := os.ReadFile("testdata/" + name); err == nil {
			f.Add(string(b))
		}
	}
	f.Add("JobId=1 JobState=RUNNING")
	f.Fuzz(func(t *testing.T, s string) {
		j, ok := ParseScontrolJob(s)
		if ok && (!jobIDRE.MatchString(j.ID) || j.State == "") {
			t.Fatalf("bad job %+v from %q", j, s)
		}
	})
}

func FuzzParseSacct(f *testing.F) {
	f.Add("12|oc-r1|COMPLETED|0:0|vm\n12.batch|batch|COMPLETED|0:0|vm\n")
	f.Fuzz(func(t *testing.T, s string) {
		for _, j := range ParseSacct(s) {
			if !jobIDRE.MatchString(j.ID) {
				t.Fatalf("bad job %+v from %q", j, s)
			}
		}
	})
}
