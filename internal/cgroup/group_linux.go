package cgroup

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Group is one per-run memory cgroup.
type Group struct {
	// Path is the group's directory.
	Path string
	// Version is its hierarchy.
	Version Version
	// LimitBytes is the memory limit written at creation (0 = none).
	LimitBytes int64
}

// Create makes the leaf group <parent>/name and sets its memory limit
// (limitBytes 0 = no limit; usage is still accounted). Swap is capped at
// zero where the hierarchy accounts for it, so a limit cannot be escaped
// by swapping.
func (m *Manager) Create(name string, limitBytes int64) (*Group, error) {
	if limitBytes < 0 {
		return nil, fmt.Errorf("cgroup %s: negative limit %d", name, limitBytes)
	}
	if name == "" || strings.ContainsAny(name, "/\x00") || name == "." || name == ".." {
		return nil, fmt.Errorf("cgroup: bad group name %q", name)
	}
	dir := filepath.Join(m.parent, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create cgroup %s: %w", dir, err)
	}
	g := &Group{Path: dir, Version: m.version, LimitBytes: limitBytes}
	if err := g.setLimit(limitBytes); err != nil {
		os.Remove(dir)
		return nil, err
	}
	return g, nil
}

func (g *Group) setLimit(limit int64) error {
	v := strconv.FormatInt(limit, 10)
	switch g.Version {
	case V2:
		if limit > 0 {
			if err := writeFile(g.file("memory.max"), v); err != nil {
				return fmt.Errorf("set memory.max of %s: %w", g.Path, err)
			}
		}
		if exists(g.file("memory.swap.max")) {
			if err := writeFile(g.file("memory.swap.max"), "0"); err != nil {
				return fmt.Errorf("set memory.swap.max of %s: %w", g.Path, err)
			}
		}
		// Kill the whole group, not one process, when it runs out of memory.
		if exists(g.file("memory.oom.group")) {
			_ = writeFile(g.file("memory.oom.group"), "1")
		}
	default:
		if limit > 0 {
			if err := writeFile(g.file("memory.limit_in_bytes"), v); err != nil {
				return fmt.Errorf("set memory.limit_in_bytes of %s: %w", g.Path, err)
			}
			// memsw (memory+swap) must be >= the memory limit; equal means no swap.
			if exists(g.file("memory.memsw.limit_in_bytes")) {
				if err := writeFile(g.file("memory.memsw.limit_in_bytes"), v); err != nil {
					return fmt.Errorf("set memory.memsw.limit_in_bytes of %s: %w", g.Path, err)
				}
			}
		}
	}
	return nil
}

// SetMemoryLimit changes the group's memory limit; limit <= 0 removes it.
// Lowering it below the group's usage makes the kernel reclaim (page cache
// first) and fails when it cannot. Under v1 the memory+swap limit moves
// with it, in the order the kernel accepts (memsw >= memory at every step).
func (g *Group) SetMemoryLimit(limit int64) error {
	v := strconv.FormatInt(limit, 10)
	if g.Version == V2 {
		if limit <= 0 {
			v = "max"
		}
		if err := writeFile(g.file("memory.max"), v); err != nil {
			return fmt.Errorf("set memory.max of %s to %s: %w", g.Path, v, err)
		}
		g.LimitBytes = max(limit, 0)
		return nil
	}
	if limit <= 0 {
		v = "-1"
	}
	mem, memsw := g.file("memory.limit_in_bytes"), g.file("memory.memsw.limit_in_bytes")
	order := []string{mem, memsw}
	if cur, err := readInt(mem); err == nil && (limit <= 0 || limit > cur) {
		order = []string{memsw, mem} // raising: memsw first
	}
	for _, f := range order {
		if f == memsw && !exists(f) {
			continue
		}
		if err := writeFile(f, v); err != nil {
			return fmt.Errorf("set %s of %s to %s: %w", filepath.Base(f), g.Path, v, err)
		}
	}
	g.LimitBytes = max(limit, 0)
	return nil
}

// Open returns the group at an existing directory (for cleaning up a group
// left by a previous server), inferring its version from its files.
func Open(dir string) (*Group, error) {
	switch {
	case exists(filepath.Join(dir, "memory.limit_in_bytes")):
		return &Group{Path: dir, Version: V1}, nil
	case exists(filepath.Join(dir, "cgroup.controllers")):
		return &Group{Path: dir, Version: V2}, nil
	}
	return nil, fmt.Errorf("open cgroup %s: not a memory cgroup: %w", dir, os.ErrNotExist)
}

func (g *Group) file(name string) string { return filepath.Join(g.Path, name) }

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// trampoline is the v1 start script: $0 is the group's cgroup.procs, "$@"
// the program and its arguments. It moves the shell into the group, then
// execs the program, whose memory is therefore all charged to the group.
const trampoline = `echo $$ > "$0" || { echo "outcore: cannot join memory cgroup $0" >&2; exit 126; }; exec "$@"`

// Start starts cmd inside the group (Prepare, cmd.Start, then what Prepare
// returned).
func (g *Group) Start(cmd *exec.Cmd) error {
	after, err := g.Prepare(cmd)
	if err != nil {
		return err
	}
	err = cmd.Start()
	after()
	return err
}

// Prepare changes cmd (before cmd.Start) so that the process starts inside
// the group. It returns a function to call after cmd.Start returns (it
// releases the directory handle of v2). cmd.SysProcAttr is created if nil;
// its other fields are kept.
func (g *Group) Prepare(cmd *exec.Cmd) (after func(), err error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	switch g.Version {
	case V2:
		fd, err := unix.Open(g.Path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, fmt.Errorf("open cgroup %s: %w", g.Path, err)
		}
		cmd.SysProcAttr.UseCgroupFD = true
		cmd.SysProcAttr.CgroupFD = fd
		return func() { unix.Close(fd) }, nil
	default:
		sh, err := exec.LookPath("/bin/sh")
		if err != nil {
			return nil, fmt.Errorf("cgroup v1 start needs /bin/sh: %w", err)
		}
		prog := cmd.Path
		args := append([]string{"sh", "-c", trampoline, g.file("cgroup.procs"), prog}, cmd.Args[1:]...)
		cmd.Path, cmd.Args = sh, args
		return func() {}, nil
	}
}

// Procs returns the pids in the group.
func (g *Group) Procs() ([]int, error) {
	b, err := os.ReadFile(g.file("cgroup.procs"))
	if err != nil {
		return nil, fmt.Errorf("read procs of %s: %w", g.Path, err)
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if p, err := strconv.Atoi(f); err == nil {
			pids = append(pids, p)
		}
	}
	return pids, nil
}

// Signal sends sig to every process in the group.
func (g *Group) Signal(sig syscall.Signal) error {
	pids, err := g.Procs()
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range pids {
		if err := syscall.Kill(p, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("signal %d: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

// Kill SIGKILLs every process in the group (v2: cgroup.kill, which also
// catches processes forked meanwhile) and waits up to timeout until it is
// empty.
func (g *Group) Kill(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	if g.Version == V2 && exists(g.file("cgroup.kill")) {
		if err := writeFile(g.file("cgroup.kill"), "1"); err != nil {
			return fmt.Errorf("kill cgroup %s: %w", g.Path, err)
		}
	}
	for {
		pids, err := g.Procs()
		if err != nil {
			return err
		}
		if len(pids) == 0 {
			return nil
		}
		for _, p := range pids {
			syscall.Kill(p, syscall.SIGKILL)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("kill cgroup %s: %d process(es) still there after %v", g.Path, len(pids), timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Remove kills what is left in the group and removes it. A group that no
// longer exists is not an error.
func (g *Group) Remove() error {
	if !exists(g.Path) {
		return nil
	}
	if err := g.Kill(5 * time.Second); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	var err error
	for i := 0; i < 100; i++ {
		err = os.Remove(g.Path)
		if err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		// EBUSY while the kernel finishes tearing exited tasks down.
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("remove cgroup %s: %w", g.Path, err)
}

func readInt(p string) (int64, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return 0, err
	}
	s := strings.TrimSpace(string(b))
	if s == "max" {
		return 0, nil
	}
	return strconv.ParseInt(s, 10, 64)
}

// Usage returns the group's memory usage in bytes, page cache included.
func (g *Group) Usage() (int64, error) {
	name := "memory.usage_in_bytes"
	if g.Version == V2 {
		name = "memory.current"
	}
	v, err := readInt(g.file(name))
	if err != nil {
		return 0, fmt.Errorf("read usage of %s: %w", g.Path, err)
	}
	return v, nil
}

// Peak returns the highest usage the kernel recorded for the group (v1
// memory.max_usage_in_bytes, v2 memory.peak on kernels >= 5.19); ok is
// false when the kernel does not record it.
func (g *Group) Peak() (int64, bool) {
	name := "memory.max_usage_in_bytes"
	if g.Version == V2 {
		name = "memory.peak"
	}
	v, err := readInt(g.file(name))
	return v, err == nil
}

// MemoryMax returns the group's memory limit as it stands (v2 memory.max,
// v1 memory.limit_in_bytes; 0 = none), which the run may have raised
// since the group was made (the model step held outside the budget); false
// when the group has no such file. It reads the file as SelfLimit does
// (limitIn).
func (g *Group) MemoryMax() (int64, bool) {
	if v, ok := limitIn(g.Path); ok {
		return v, true
	}
	return 0, exists(g.file("memory.max")) || exists(g.file("memory.limit_in_bytes"))
}

// OOMKills returns how many processes of the group the kernel's OOM killer
// killed because of the group's limit (v2 memory.events oom_kill, v1
// memory.oom_control oom_kill). On v1 kernels without that counter, a group
// under OOM or whose limit was hit and that has a failcnt counts as 1.
func (g *Group) OOMKills() (int64, error) {
	if g.Version == V2 {
		b, err := os.ReadFile(g.file("memory.events"))
		if err != nil {
			return 0, fmt.Errorf("read memory.events of %s: %w", g.Path, err)
		}
		n, _ := parseKeyed(string(b), "oom_kill")
		return n, nil
	}
	b, err := os.ReadFile(g.file("memory.oom_control"))
	if err != nil {
		return 0, fmt.Errorf("read memory.oom_control of %s: %w", g.Path, err)
	}
	if n, ok := parseKeyed(string(b), "oom_kill"); ok {
		return n, nil
	}
	if under, _ := parseKeyed(string(b), "under_oom"); under > 0 {
		return 1, nil
	}
	return 0, nil
}
