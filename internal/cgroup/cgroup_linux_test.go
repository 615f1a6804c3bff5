package cgroup

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"outcore/internal/osutil"
)

const helperEnv = "OUTCORE_CGROUP_TEST_HELPER"

// TestMain turns the test binary into a helper child when helperEnv is set:
// "cgroup" prints the memory cgroup it runs in, "alloc N" touches N MiB,
// "self" prints its own group's directory and limit as osutil.SelfCgroupUsageFile and
// SelfLimit see them, "sleep" sleeps.
func TestMain(m *testing.M) {
	switch mode := os.Getenv(helperEnv); {
	case mode == "":
		os.Exit(m.Run())
	case mode == "cgroup":
		b, _ := os.ReadFile("/proc/self/cgroup")
		os.Stdout.Write(b)
		os.Exit(0)
	case strings.HasPrefix(mode, "alloc "):
		n, _ := strconv.Atoi(strings.TrimPrefix(mode, "alloc "))
		var keep [][]byte
		for i := 0; i < n; i++ {
			b := make([]byte, 1<<20)
			for j := range b {
				b[j] = byte(j)
			}
			keep = append(keep, b)
		}
		fmt.Println("allocated", len(keep))
		os.Exit(0)
	case mode == "self":
		f, err := osutil.SelfCgroupUsageFile()
		lim, ok := SelfLimit()
		fmt.Println(filepath.Dir(f), lim, ok, err)
		os.Exit(0)
	case mode == "sleep":
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	os.Exit(3)
}

func detect(t *testing.T) *Manager {
	t.Helper()
	m, err := Detect()
	if err != nil {
		if errors.Is(err, ErrUnavailable) {
			t.Skipf("no memory cgroups here: %v", err)
		}
		t.Fatal(err)
	}
	t.Logf("%s", m.Describe())
	return m
}

func helper(t *testing.T, g *Group, mode string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := g.Start(cmd); err != nil {
		t.Fatal(err)
	}
	return cmd, &out
}

func newGroup(t *testing.T, m *Manager, limit int64) *Group {
	t.Helper()
	g, err := m.Create(fmt.Sprintf("test-%d-%d", os.Getpid(), time.Now().UnixNano()), limit)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := g.Remove(); err != nil {
			t.Error(err)
		}
		if _, err := os.Stat(g.Path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("group %s still exists after Remove", g.Path)
		}
	})
	return g
}

// TestChildStartsInsideGroup: the child's own view of its cgroup, read at
// its start, is the new group.
func TestChildStartsInsideGroup(t *testing.T) {
	m := detect(t)
	g := newGroup(t, m, 256<<20)
	cmd, out := helper(t, g, "cgroup")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	name := g.Path[strings.LastIndex(g.Path, "/")+1:]
	if !strings.Contains(out.String(), name) {
		t.Fatalf("child's /proc/self/cgroup does not name %s:\n%s", name, out)
	}
	if peak, ok := g.Peak(); !ok || peak <= 0 {
		t.Fatalf("peak %d %v", peak, ok)
	}
}

// TestLimitKillsWithOOM: a child touching 200 MiB under a 64 MiB limit is
// killed by the OOM killer, and the group says so.
func TestLimitKillsWithOOM(t *testing.T) {
	m := detect(t)
	g := newGroup(t, m, 64<<20)
	cmd, out := helper(t, g, "alloc 200")
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("child survived 200 MiB under a 64 MiB limit: %v %s", err, out)
	}
	ws := ee.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child ended with %v, want SIGKILL: %s", ws, out)
	}
	n, err := g.OOMKills()
	if err != nil || n < 1 {
		t.Fatalf("OOMKills = %d, %v", n, err)
	}
	// A group without a limit lets the same child finish.
	g2 := newGroup(t, m, 0)
	cmd2, out2 := helper(t, g2, "alloc 200")
	if err := cmd2.Wait(); err != nil {
		t.Fatalf("unlimited child: %v %s", err, out2)
	}
	if n, _ := g2.OOMKills(); n != 0 {
		t.Fatalf("unlimited group reports %d OOM kills", n)
	}
	if peak, _ := g2.Peak(); peak < 200<<20 {
		t.Fatalf("peak %d < 200 MiB", peak)
	}
}

// TestSetMemoryLimit: a group's limit can be raised (the child that the
// old limit killed now finishes), lowered again (it is killed again) and
// removed.
func TestSetMemoryLimit(t *testing.T) {
	m := detect(t)
	g := newGroup(t, m, 64<<20)
	// 4 GiB: the race detector's shadow memory multiplies the child's use
	if err := g.SetMemoryLimit(4 << 30); err != nil {
		t.Fatal(err)
	}
	cmd, out := helper(t, g, "alloc 200")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("200 MiB under a limit raised to 4 GiB: %v %s", err, out)
	}
	if err := g.SetMemoryLimit(64 << 20); err != nil {
		t.Fatal(err)
	}
	cmd, out = helper(t, g, "alloc 200")
	if err := cmd.Wait(); err == nil {
		t.Fatalf("200 MiB under a limit lowered to 64 MiB survived: %s", out)
	}
	if err := g.SetMemoryLimit(0); err != nil {
		t.Fatal(err)
	}
	file := "memory.max"
	if g.Version == V1 {
		file = "memory.limit_in_bytes"
	}
	b, err := os.ReadFile(filepath.Join(g.Path, file))
	if err != nil {
		t.Fatal(err)
	}
	if v := strings.TrimSpace(string(b)); v != "max" && len(v) < 15 { // v1 reports "no limit" as a huge number
		t.Fatalf("%s after removing the limit = %q", file, v)
	}
}

// TestKillEmptiesGroup: Kill stops a sleeping child and empties the group.
func TestKillEmptiesGroup(t *testing.T) {
	m := detect(t)
	g := newGroup(t, m, 0)
	cmd, _ := helper(t, g, "sleep")
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	waitJoined(t, g, cmd.Process.Pid)
	if err := g.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
			t.Fatalf("child ended with %v, want SIGTERM", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("SIGTERM to the group did not stop the child")
	}
	cmd2, _ := helper(t, g, "sleep")
	done2 := make(chan error, 1)
	go func() { done2 <- cmd2.Wait() }()
	waitJoined(t, g, cmd2.Process.Pid)
	if err := g.Kill(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done2:
	case <-time.After(10 * time.Second):
		t.Fatal("Kill did not stop the child")
	}
	pids, err := g.Procs()
	if err != nil || len(pids) != 0 {
		t.Fatalf("procs after kill: %v %v", pids, err)
	}
}

// waitJoined waits until pid is the group's only process: with v1 the
// child joins a moment after Start (the trampoline).
func waitJoined(t *testing.T, g *Group, pid int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; {
		pids, err := g.Procs()
		if err != nil {
			t.Fatal(err)
		}
		if len(pids) == 1 && pids[0] == pid {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("child %d not in group: %v", pid, pids)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestCreateRejectsBadInput(t *testing.T) {
	m := detect(t)
	for _, name := range []string{"", "a/b", "..", "."} {
		if _, err := m.Create(name, 0); err == nil {
			t.Errorf("Create(%q) succeeded", name)
		}
	}
	if _, err := m.Create("neg", -1); err == nil {
		t.Error("negative limit accepted")
	}
}
