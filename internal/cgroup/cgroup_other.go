//go:build !linux

package cgroup

import (
	"os/exec"
	"syscall"
	"time"
)

// Manager is unavailable outside Linux.
type Manager struct{}

// Detect always fails outside Linux.
func Detect() (*Manager, error) { return nil, ErrUnavailable }

// Version returns 0.
func (m *Manager) Version() Version { return 0 }

// Parent returns "".
func (m *Manager) Parent() string { return "" }

// Describe returns "none".
func (m *Manager) Describe() string { return "none" }

// Create fails outside Linux.
func (m *Manager) Create(name string, limitBytes int64) (*Group, error) { return nil, ErrUnavailable }

// Group is unavailable outside Linux.
type Group struct {
	Path       string
	Version    Version
	LimitBytes int64
}

// Open fails outside Linux.
func Open(dir string) (*Group, error) { return nil, ErrUnavailable }

// Prepare fails outside Linux.
func (g *Group) Prepare(cmd *exec.Cmd) (func(), error) { return nil, ErrUnavailable }

// Start fails outside Linux.
func (g *Group) Start(cmd *exec.Cmd) error { return ErrUnavailable }

// Procs fails outside Linux.
func (g *Group) Procs() ([]int, error) { return nil, ErrUnavailable }

// Signal fails outside Linux.
func (g *Group) Signal(sig syscall.Signal) error { return ErrUnavailable }

// Kill fails outside Linux.
func (g *Group) Kill(timeout time.Duration) error { return ErrUnavailable }

// Remove does nothing outside Linux.
func (g *Group) Remove() error { return nil }

// Usage fails outside Linux.
func (g *Group) Usage() (int64, error) { return 0, ErrUnavailable }

// Peak reports nothing outside Linux.
func (g *Group) Peak() (int64, bool) { return 0, false }

// MemoryMax is unavailable off Linux.
func (g *Group) MemoryMax() (int64, bool) { return 0, false }

// OOMKills fails outside Linux.
func (g *Group) OOMKills() (int64, error) { return 0, ErrUnavailable }

// SetMemoryLimit is unavailable off Linux.
func (g *Group) SetMemoryLimit(limit int64) error { return ErrUnavailable }

// SelfLimit is unavailable off Linux.
func SelfLimit() (int64, bool) { return 0, false }
