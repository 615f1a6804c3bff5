package supervise

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"outcore/engine/metrics"
	"outcore/internal/cgroup"
	"outcore/internal/osutil"
)

// The test binary doubles as the child (the usual os/exec test pattern):
// with childEnv set it prints the group it was told about (the last two
// arguments, "--cgroup X") as a log record, then behaves as the mode says.
const childEnv = "OUTCORE_SUPERVISE_TEST_CHILD"

func TestMain(m *testing.M) {
	mode := os.Getenv(childEnv)
	if mode == "" {
		os.Exit(m.Run())
	}
	a := os.Args
	if mode == "stubborn" {
		// ignore SIGTERM before the first line, which the test waits for
		signal.Ignore(syscall.SIGTERM)
	}
	fmt.Printf(`{"type":"log","level":"info","msg":%q}`+"\n", a[len(a)-2]+" "+a[len(a)-1])
	switch mode {
	case "done":
		fmt.Fprintln(os.Stderr, "child stderr line")
		fmt.Println("not json")
		fmt.Println(strings.Repeat("x", MaxLine+10))
		fmt.Println(`{"type":"summary","outcome":"done","best_epoch":0}`)
		os.Exit(0)
	case "hog":
		var keep [][]byte
		for i := 0; i < 40; i++ {
			b := make([]byte, 16<<20)
			for j := 0; j < len(b); j += 4096 {
				b[j] = 1
			}
			keep = append(keep, b)
		}
		fmt.Println(`{"type":"log","level":"info","msg":"hog survived"}`)
		os.Exit(0)
	case "stubborn":
		time.Sleep(time.Minute)
	case "fail":
		fmt.Fprintln(os.Stderr, "boom")
		os.Exit(3)
	case "scratch":
		// A variant's scratch folder (ginex's runtime files), then death
		// by SIGKILL as under the OOM killer: nothing cleans up.
		d, err := os.MkdirTemp(os.Getenv("SCRATCH_DIR"), fmt.Sprintf("ginex-run-%d-", os.Getpid()))
		if err == nil {
			err = os.WriteFile(filepath.Join(d, "e0_sb0"), []byte("runtime file"), 0o644)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(4)
		}
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
	}
	os.Exit(2)
}

// run starts the test binary as a child in mode and collects its lines.
func run(t *testing.T, s *Supervisor, mode string, spec Spec) (*Child, *lines, *bytes.Buffer) {
	t.Helper()
	var ls lines
	var stderr bytes.Buffer
	spec.Path, spec.Args = os.Args[0], []string{"-test.run=^$"}
	spec.Env = append(spec.Env, childEnv+"="+mode)
	if spec.Name == "" {
		spec.Name = "supervise-test"
	}
	spec.Lines, spec.Stderr = ls.add, &stderr
	c, err := s.Start(spec)
	if err != nil {
		t.Fatal(err)
	}
	return c, &ls, &stderr
}

type lines struct {
	mu sync.Mutex
	l  [][]byte
}

func (l *lines) add(b []byte) {
	l.mu.Lock()
	l.l = append(l.l, b)
	l.mu.Unlock()
}

func (l *lines) last(t *testing.T) metrics.SummaryRecord {
	t.Helper()
	var sum metrics.SummaryRecord
	if len(l.l) == 0 || json.Unmarshal(l.l[len(l.l)-1], &sum) != nil || sum.Type != metrics.TypeSummary {
		t.Fatalf("last line is not a summary: %d lines", len(l.l))
	}
	return sum
}

func needCgroups(t *testing.T, s *Supervisor) {
	t.Helper()
	if _, err := s.Cgroups(); err != nil {
		if !errors.Is(err, cgroup.ErrUnavailable) {
			t.Fatal(err)
		}
		t.Skipf("memory cgroups unavailable: %v", err)
	}
}

func gone(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("group %s still there after Wait (%v)", dir, err)
	}
}

// TestChildFinishes: a child that writes its summary ends done, in a group
// it was told about, with its lines in order (a long one cut), its stderr
// forwarded and no summary added.
func TestChildFinishes(t *testing.T) {
	s := &Supervisor{}
	needCgroups(t, s)
	c, ls, stderr := run(t, s, "done", Spec{Limit: 256 << 20, WriteSummary: true})
	if !c.Enforced() || c.Group() == nil || !strings.Contains(c.Note(), "limit 256 MiB") {
		t.Fatalf("enforced %v group %v note %q", c.Enforced(), c.Group(), c.Note())
	}
	dir := c.Group().Path
	r := c.Wait()
	if r.OOM || r.Summary != metrics.OutcomeDone || r.ExitCode != 0 || r.Signal != 0 || r.Err != nil || r.Group != dir || r.PeakBytes <= 0 {
		t.Fatalf("result %+v", r)
	}
	if len(ls.l) != 4 || string(ls.l[0]) != fmt.Sprintf(`{"type":"log","level":"info","msg":"--cgroup %s"}`, dir) ||
		string(ls.l[1]) != "not json" || len(ls.l[2]) != MaxLine {
		t.Fatalf("%d lines; first %q", len(ls.l), ls.l[0])
	}
	if ls.last(t).Outcome != metrics.OutcomeDone {
		t.Fatal("summary not last")
	}
	if !strings.Contains(stderr.String(), "child stderr line") {
		t.Fatalf("stderr %q", stderr.String())
	}
	gone(t, dir)
	if c.Wait() != r {
		t.Fatal("second Wait gave another result")
	}
}

// TestChildOOM: a child touching 640 MiB under a 64 MiB limit is killed by
// the kernel; the result says oom, and the summary it could not write is
// written for it.
func TestChildOOM(t *testing.T) {
	s := &Supervisor{}
	needCgroups(t, s)
	c, ls, _ := run(t, s, "hog", Spec{Limit: 64 << 20, WriteSummary: true})
	r := c.Wait()
	if !r.OOM || r.Signal != syscall.SIGKILL || r.OOMKills < 1 || r.Killed || r.Summary != "" {
		t.Fatalf("result %+v", r)
	}
	sum := ls.last(t)
	if sum.Outcome != metrics.OutcomeOOM || !strings.Contains(sum.Error, "67108864 bytes") || sum.PeakCgroupBytes <= 0 || sum.PeakCgroupBytes > 65<<20 {
		t.Fatalf("summary %+v", sum)
	}
	for _, l := range ls.l {
		if bytes.Contains(l, []byte("hog survived")) {
			t.Fatal("the hog survived its limit")
		}
	}
}

// TestStopKillsStubbornChild: a child that ignores SIGTERM is SIGKILLed
// after the grace; under a limit that is not an OOM.
func TestStopKillsStubbornChild(t *testing.T) {
	s := &Supervisor{}
	needCgroups(t, s)
	c, ls, _ := run(t, s, "stubborn", Spec{Limit: 256 << 20, WriteSummary: true})
	// wait until it ignores SIGTERM (it does before printing its first line)
	deadline := time.Now().Add(10 * time.Second)
	for {
		ls.mu.Lock()
		n := len(ls.l)
		ls.mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	t0 := time.Now()
	c.Stop(300 * time.Millisecond)
	r := c.Wait()
	if r.OOM || !r.Killed || r.Signal != syscall.SIGKILL || time.Since(t0) < 300*time.Millisecond {
		t.Fatalf("result %+v after %v", r, time.Since(t0))
	}
	if sum := ls.last(t); sum.Outcome != metrics.OutcomeInterrupted {
		t.Fatalf("summary %+v", sum)
	}
}

// TestWithoutCgroup: a child run without a group is told so ("--cgroup
// none"), is not enforced, and a failure is reported as failed.
func TestWithoutCgroup(t *testing.T) {
	s := &Supervisor{}
	c, ls, stderr := run(t, s, "fail", Spec{Limit: 64 << 20, NoCgroup: "disabled by the test", WriteSummary: true})
	if c.Enforced() || c.Group() != nil || c.Note() != "disabled by the test" {
		t.Fatalf("enforced %v note %q", c.Enforced(), c.Note())
	}
	r := c.Wait()
	if r.OOM || r.ExitCode != 3 || r.Group != "" {
		t.Fatalf("result %+v", r)
	}
	if string(ls.l[0]) != `{"type":"log","level":"info","msg":"--cgroup none"}` {
		t.Fatalf("first line %q", ls.l[0])
	}
	if sum := ls.last(t); sum.Outcome != metrics.OutcomeFailed || !strings.Contains(sum.Error, "exit status 3") {
		t.Fatalf("summary %+v", sum)
	}
	if !strings.Contains(stderr.String(), "boom") {
		t.Fatalf("stderr %q", stderr.String())
	}
}

// TestEvictsBeforeStart: Spec.Evict drops the directory's cached pages
// before the child starts.
func TestEvictsBeforeStart(t *testing.T) {
	dir := t.TempDir()
	var maps []*osutil.Mapping
	resident := func() int {
		n := 0
		for _, m := range maps {
			vec := make([]byte, (len(m.Data)+osutil.PageSize()-1)/osutil.PageSize())
			if err := osutil.Mincore(m.Data, vec); err != nil {
				t.Fatal(err)
			}
			for _, v := range vec {
				n += int(v & 1)
			}
		}
		return n
	}
	for _, n := range []string{"features.bin", "indices.bin"} {
		p := filepath.Join(dir, n)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		f.Write(make([]byte, 1<<20))
		f.Sync() // clean pages, which eviction can drop
		f.Close()
		os.ReadFile(p)
		m, err := osutil.MapFile(p) // never touched: mapped pages are not evicted
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		maps = append(maps, m)
	}
	if resident() == 0 {
		t.Skip("files not in the page cache after reading them (tmpfs?)")
	}
	c, _, _ := run(t, &Supervisor{}, "done", Spec{NoCgroup: "not needed", Evict: dir})
	c.Wait()
	if n, err := c.Evicted(); n != 2 || err != nil {
		t.Fatalf("evicted %d files, %v", n, err)
	}
	if r := resident(); r != 0 {
		t.Fatalf("%d pages still cached after the eviction", r)
	}
	c, _, _ = run(t, &Supervisor{}, "done", Spec{NoCgroup: "not needed", Evict: filepath.Join(dir, "missing")})
	c.Wait()
	if _, err := c.Evicted(); err == nil {
		t.Fatal("evicting a missing directory reported no error")
	}
}

func TestReadLines(t *testing.T) {
	long := strings.Repeat("y", MaxLine+5)
	tests := []struct {
		in   string
		want []string
	}{
		{"a\nb\n", []string{"a", "b"}},
		{"a\n\nb", []string{"a", "b"}},
		{"", nil},
		{long + "\nz\n", []string{long[:MaxLine], "z"}},
	}
	for i, tc := range tests {
		var got []string
		readLines(strings.NewReader(tc.in), func(b []byte) { got = append(got, string(b)) })
		if !slices.Equal(got, tc.want) {
			t.Errorf("case %d: %d lines, want %d", i, len(got), len(tc.want))
		}
	}
}

// TestStderrFileIsHandedOver: a file (a terminal, in the CLI) is the
// child's own stderr, not a pipe, so that the child can tell a terminal.
func TestStderrFileIsHandedOver(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := &Supervisor{}
	c, err := s.Start(Spec{Path: os.Args[0], Args: []string{"-test.run=^$"}, Env: []string{childEnv + "=fail"},
		Name: "supervise-test", NoCgroup: "not needed", Stderr: f})
	if err != nil {
		t.Fatal(err)
	}
	if c.cmd.Stderr != f {
		t.Fatalf("child's stderr is %T, want the file itself", c.cmd.Stderr)
	}
	if r := c.Wait(); r.ExitCode != 3 {
		t.Fatalf("result %+v", r)
	}
	if b, _ := os.ReadFile(f.Name()); !strings.Contains(string(b), "boom") {
		t.Fatalf("stderr file holds %q", b)
	}
}

// TestScratchRemovedWhateverTheOutcome: a child killed with its scratch
// folder on disk leaves nothing behind; others' folders stay.
func TestScratchRemovedWhateverTheOutcome(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "ginex-run-1-keep")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	c, _, stderr := run(t, &Supervisor{}, "scratch", Spec{NoCgroup: "not needed", Scratch: dir, Env: []string{"SCRATCH_DIR=" + dir}})
	r := c.Wait()
	if r.Signal != syscall.SIGKILL {
		t.Fatalf("child ended %+v, stderr %q", r, stderr.String())
	}
	if len(r.ScratchRemoved) != 1 || r.ScratchErr != nil || !strings.Contains(r.ScratchRemoved[0], fmt.Sprintf("ginex-run-%d-", c.Pid())) {
		t.Errorf("removed %v (%v)", r.ScratchRemoved, r.ScratchErr)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(left) != 1 || left[0] != other {
		t.Errorf("left in the scratch folder: %v", left)
	}
}

// TestOOMErrorNamesTheLimitInForce: a run whose group was raised above its
// budget (the model step, device tiers held outside it) was killed at the
// raised limit; the error says so instead of naming the budget alone.
func TestOOMErrorNamesTheLimitInForce(t *testing.T) {
	raised := oomError(&Result{Limit: 375809638, LimitAtEnd: 896532480, Group: "/g", OOMKills: 1})
	if !strings.Contains(raised, "896532480 bytes in force") || !strings.Contains(raised, "375809638-byte budget") ||
		!strings.Contains(raised, "killed 1 process(es)") {
		t.Errorf("raised limit: %q", raised)
	}
	plain := oomError(&Result{Limit: 1 << 20, LimitAtEnd: 1 << 20, Group: "/g"})
	if plain != "killed by the memory limit of 1048576 bytes (cgroup /g)" {
		t.Errorf("budget only: %q", plain)
	}
}
