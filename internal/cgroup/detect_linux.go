package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"outcore/internal/osutil"
)

// Manager creates per-run groups under one parent group.
type Manager struct {
	version Version
	parent  string // directory of the parent group
	note    string
}

// Version returns the hierarchy the manager uses.
func (m *Manager) Version() Version { return m.version }

// Parent returns the parent group's directory.
func (m *Manager) Parent() string { return m.parent }

// Describe says which hierarchy and parent group the manager uses, for run
// records ("cgroup v1 memory under /sys/fs/cgroup/memory/.../outcore").
func (m *Manager) Describe() string {
	s := fmt.Sprintf("%s memory under %s", m.version, m.parent)
	if m.note != "" {
		s += " (" + m.note + ")"
	}
	return s
}

// Detect finds a writable memory cgroup hierarchy and prepares the parent
// group: v2 when the unified hierarchy offers the memory controller, else
// the v1 memory controller. The error wraps ErrUnavailable and says why
// each candidate failed.
func Detect() (*Manager, error) {
	mi, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	mounts, err := parseMountinfo(mi)
	mi.Close()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	pc, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	own, err := osutil.ParseProcCgroups(pc)
	pc.Close()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	var why []string
	for _, m := range mounts {
		if m.FSType != "cgroup2" {
			continue
		}
		p, ok := own[""]
		if !ok {
			why = append(why, "v2: this process has no cgroup v2 path")
			continue
		}
		dir := groupDir(m, p)
		if dir == "" {
			why = append(why, fmt.Sprintf("v2: %s is not visible under %s", p, m.Point))
			continue
		}
		mgr, err := tryV2(m.Point, dir)
		if err == nil {
			return mgr, nil
		}
		why = append(why, "v2: "+err.Error())
	}
	for _, m := range mounts {
		if m.FSType != "cgroup" || !hasOpt(m.Opts, "memory") {
			continue
		}
		dir := m.Point
		if p, ok := own["memory"]; ok {
			if d := groupDir(m, p); d != "" {
				dir = d
			}
		}
		mgr, err := tryV1(dir)
		if err == nil {
			return mgr, nil
		}
		why = append(why, "v1: "+err.Error())
	}
	if len(why) == 0 {
		why = append(why, "no cgroup hierarchy with the memory controller is mounted")
	}
	return nil, fmt.Errorf("%w: %s", ErrUnavailable, strings.Join(why, "; "))
}

func tryV1(dir string) (*Manager, error) {
	if _, err := os.Stat(filepath.Join(dir, "memory.limit_in_bytes")); err != nil {
		return nil, fmt.Errorf("no memory controller at %s: %w", dir, err)
	}
	parent := filepath.Join(dir, ParentName)
	if err := os.Mkdir(parent, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("create %s: %w", parent, err)
	}
	// Opening for writing checks permission without changing anything.
	f, err := os.OpenFile(filepath.Join(parent, "memory.limit_in_bytes"), os.O_WRONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("parent group %s not writable: %w", parent, err)
	}
	f.Close()
	return &Manager{version: V1, parent: parent}, nil
}

// tryV2 prepares <base>/outcore with the memory controller enabled for its
// children. base is this process's own group when its subtree can enable
// memory (the root group, or a delegated empty group), else the group
// above it (cgroup v2 forbids processes in a group whose children have
// controllers, so a group holding this process cannot be the parent).
func tryV2(mountPoint, dir string) (*Manager, error) {
	ctrl, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	if err != nil {
		return nil, fmt.Errorf("read controllers of %s: %w", dir, err)
	}
	if !hasField(string(ctrl), "memory") {
		return nil, fmt.Errorf("memory controller not available in %s (controllers: %q)", dir, strings.TrimSpace(string(ctrl)))
	}
	var errs []string
	bases := []string{dir}
	if filepath.Clean(dir) != filepath.Clean(mountPoint) {
		bases = append(bases, filepath.Dir(dir))
	}
	for i, base := range bases {
		if i == 0 {
			if err := writeFile(filepath.Join(base, "cgroup.subtree_control"), "+memory"); err != nil {
				errs = append(errs, fmt.Sprintf("enable memory below %s: %v", base, err))
				continue
			}
		}
		parent := filepath.Join(base, ParentName)
		if err := os.Mkdir(parent, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			errs = append(errs, fmt.Sprintf("create %s: %v", parent, err))
			continue
		}
		if err := writeFile(filepath.Join(parent, "cgroup.subtree_control"), "+memory"); err != nil {
			errs = append(errs, fmt.Sprintf("enable memory below %s: %v", parent, err))
			continue
		}
		note := ""
		if i == 1 {
			note = "beside this process's group, which holds processes"
		}
		return &Manager{version: V2, parent: parent, note: note}, nil
	}
	return nil, errors.New(strings.Join(errs, "; "))
}

func hasField(s, f string) bool {
	for _, x := range strings.Fields(s) {
		if x == f {
			return true
		}
	}
	return false
}

// writeFile writes a control file in one write, as the kernel expects.
func writeFile(p, v string) error {
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(v); err != nil {
		f.Close()
		return fmt.Errorf("write %q to %s: %w", v, p, err)
	}
	return f.Close()
}
