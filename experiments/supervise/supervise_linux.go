package supervise

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"outcore/engine/metrics"
	"outcore/internal/cgroup"
	"outcore/internal/osutil"
)

// CgroupFlag is the flag of `outcore train` the supervisor appends to the
// child's arguments: `--cgroup PATH`, the memory cgroup the child was
// placed in (whose limit it may lift and hold, cgroup.Limit), or
// `--cgroup none` (NoGroup) when it runs without one. Either way the child
// is placed: it must not place itself again.
const CgroupFlag = "cgroup"

// NoGroup is CgroupFlag's value for a child run without a memory cgroup.
const NoGroup = "none"

// MaxLine caps one stdout line of a child; longer lines are cut.
const MaxLine = 1 << 20

// Supervisor starts children in memory cgroups. It detects the cgroup
// hierarchy once, at first use; one per process is enough.
type Supervisor struct {
	once sync.Once
	mgr  *cgroup.Manager
	err  error
}

// Cgroups returns the memory cgroup hierarchy in use, or why there is none
// (the error wraps cgroup.ErrUnavailable).
func (s *Supervisor) Cgroups() (*cgroup.Manager, error) {
	s.once.Do(func() { s.mgr, s.err = cgroup.Detect() })
	return s.mgr, s.err
}

// Spec describes one child.
type Spec struct {
	// Path and Args are the program and its arguments (Args without the
	// program name); CgroupFlag is appended.
	Path string
	Args []string
	// Dir is the working directory ("" = this process's).
	Dir string
	// Env is added to this process's environment.
	Env []string
	// Name names the child's group; a random suffix keeps it unique.
	Name string
	// Limit is the memory limit in bytes (0 = none: the group only
	// accounts usage).
	Limit int64
	// NoCgroup, when not "", runs the child without a memory cgroup and
	// says why (Child.Note).
	NoCgroup string
	// Evict is a directory whose files' clean pages are dropped from the
	// page cache before the start ("" = none).
	Evict string
	// Lines receives each stdout line (without its newline; longer than
	// MaxLine is cut), in order, from one goroutine; the slice is the
	// receiver's to keep.
	Lines func(line []byte)
	// Stderr receives the child's stderr (nil = discarded).
	Stderr io.Writer
	// Scratch is the directory where the child makes its per-run scratch
	// folders, named "<variant>-run-<pid>-*" (ginex's runtime files,
	// engine/system/ginex); Wait removes those the child left behind,
	// whatever the outcome: a child killed for memory never cleans up
	// ("" = none).
	Scratch string
	// WriteSummary: when the child ends without a summary record, Wait
	// sends one (outcome oom, interrupted or failed) through Lines, so that
	// the record stream is complete for whoever reads it.
	WriteSummary bool
	// External runs a program outside outcore (DESIGN §14): Args are
	// passed as given (no CgroupFlag), Env is its whole environment
	// (nothing of this process's), Lines reads the pipe handed to it as
	// file descriptor 3 (RecordsFD: its records) and its stdout goes to
	// Stdout (nil = discarded).
	External bool
	Stdout   io.Writer
}

// RecordsFD is the descriptor an External child writes its records to
// ("/dev/fd/3").
const RecordsFD = 3

// Child is one started child.
type Child struct {
	spec     Spec
	cmd      *exec.Cmd
	grp      *cgroup.Group
	note     string
	evicted  int
	evictErr error

	done    chan struct{} // closed when the child has exited
	waitErr error
	readers sync.WaitGroup

	killed      atomic.Bool // the supervisor sent SIGKILL
	interrupted atomic.Bool // Signal/Stop was called
	mu          sync.Mutex
	summary     string // outcome of the summary record, "" before one
	sawSummary  bool
	waitOnce    sync.Once
	result      *Result
}

// Start creates the child's group, evicts Spec.Evict's pages and starts
// the child inside the group. A group that cannot be created is not an
// error: the child runs without one (Enforced false, Note says why).
// Always call Wait afterwards.
func (s *Supervisor) Start(spec Spec) (*Child, error) {
	if spec.Lines == nil {
		spec.Lines = func([]byte) {}
	}
	if spec.Stderr == nil {
		spec.Stderr = io.Discard
	}
	c := &Child{spec: spec, done: make(chan struct{})}
	if spec.Evict != "" {
		c.evicted, c.evictErr = osutil.EvictDir(spec.Evict)
	}

	switch mgr, err := s.Cgroups(); {
	case spec.NoCgroup != "":
		c.note = spec.NoCgroup
	case err != nil:
		c.note = err.Error()
	default:
		c.grp, err = mgr.Create(spec.Name+"-"+randHex(4), spec.Limit)
		switch {
		case err != nil:
			c.note = fmt.Sprintf("cgroup not created: %v", err)
			c.grp = nil
		case spec.Limit > 0:
			c.note = fmt.Sprintf("%s, limit %d MiB", mgr.Describe(), spec.Limit>>20)
		default:
			c.note = fmt.Sprintf("%s, no limit set (usage accounted only)", mgr.Describe())
		}
	}
	placed := NoGroup
	if c.grp != nil {
		placed = c.grp.Path
	}

	args := append([]string(nil), spec.Args...)
	if !spec.External {
		args = append(args, "--"+CgroupFlag, placed)
	}
	cmd := exec.Command(spec.Path, args...)
	cmd.Dir = spec.Dir
	if spec.External {
		cmd.Env = append([]string{}, spec.Env...)
	} else {
		cmd.Env = append(os.Environ(), spec.Env...)
	}
	// Own process group (signals reach helpers it forks even without a
	// cgroup), and death with the supervisor: a child must not outlive it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	outR, outW, err := os.Pipe()
	if err != nil {
		c.removeGroup()
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	// A file (a terminal) is handed to the child as it is, so that it can
	// tell a terminal and draw its progress there; other writers get a pipe.
	var errR, errW *os.File
	if f, ok := spec.Stderr.(*os.File); ok {
		cmd.Stderr = f
	} else if errR, errW, err = os.Pipe(); err != nil {
		outR.Close()
		outW.Close()
		c.removeGroup()
		return nil, fmt.Errorf("stderr pipe: %w", err)
	} else {
		cmd.Stderr = errW
	}
	if spec.External {
		// records on descriptor 3 (ExtraFiles[0]); stdout is the
		// program's own output
		cmd.ExtraFiles = []*os.File{outW}
		cmd.Stdout = spec.Stdout
		if cmd.Stdout == nil {
			cmd.Stdout = io.Discard
		}
	} else {
		cmd.Stdout = outW
	}
	closeAll := func(fs ...*os.File) {
		for _, f := range fs {
			if f != nil {
				f.Close()
			}
		}
	}
	after := func() {}
	if c.grp != nil {
		if after, err = c.grp.Prepare(cmd); err != nil {
			closeAll(outR, outW, errR, errW)
			c.removeGroup()
			return nil, fmt.Errorf("place the child in its cgroup: %w", err)
		}
	}
	c.cmd = cmd

	// Pdeathsig is tied to the thread that forks: one locked goroutine
	// starts the child and waits for it.
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		err := cmd.Start()
		after()
		closeAll(outW, errW)
		started <- err
		if err != nil {
			close(c.done)
			return
		}
		c.waitErr = cmd.Wait()
		close(c.done)
	}()
	if err := <-started; err != nil {
		closeAll(outR, errR)
		c.removeGroup()
		return nil, fmt.Errorf("start %s: %w", spec.Path, err)
	}
	c.readers.Add(1)
	go func() {
		defer c.readers.Done()
		defer outR.Close()
		readLines(outR, c.line)
	}()
	if errR != nil {
		c.readers.Add(1)
		go func() {
			defer c.readers.Done()
			defer errR.Close()
			io.Copy(spec.Stderr, errR)
		}()
	}
	return c, nil
}

// line notes a summary record and hands the line on.
func (c *Child) line(b []byte) {
	if bytes.Contains(b, []byte(`"summary"`)) {
		var head struct {
			Type    string `json:"type"`
			Outcome string `json:"outcome"`
		}
		if json.Unmarshal(b, &head) == nil && head.Type == metrics.TypeSummary {
			c.mu.Lock()
			c.sawSummary, c.summary = true, head.Outcome
			c.mu.Unlock()
		}
	}
	c.spec.Lines(b)
}

// Pid is the child's process id.
func (c *Child) Pid() int { return c.cmd.Process.Pid }

// Group is the child's memory cgroup, nil without one.
func (c *Child) Group() *cgroup.Group { return c.grp }

// Enforced reports whether a memory cgroup enforces a limit on the child.
func (c *Child) Enforced() bool { return c.grp != nil && c.spec.Limit > 0 }

// Note says which cgroup holds the child and with what limit, or why none.
func (c *Child) Note() string { return c.note }

// Evicted says how many files of Spec.Evict were evicted from the page
// cache, and the error that stopped the eviction.
func (c *Child) Evicted() (int, error) { return c.evicted, c.evictErr }

// Done is closed when the child has exited.
func (c *Child) Done() <-chan struct{} { return c.done }

// Signal sends sig to the child's process group and every process in its
// cgroup.
func (c *Child) Signal(sig syscall.Signal) {
	c.interrupted.Store(true)
	if sig == syscall.SIGKILL {
		c.killed.Store(true)
	}
	syscall.Kill(-c.Pid(), sig)
	if c.grp != nil {
		c.grp.Signal(sig)
	}
}

// Stop asks the child to end (SIGTERM, and SIGCONT for a stopped child)
// and kills it (SIGKILL, the whole group) when it has not exited after
// grace. It returns when the child
// has exited or was killed.
func (c *Child) Stop(grace time.Duration) {
	c.Signal(syscall.SIGTERM)
	// A stopped child (SIGSTOP: a stalled run) handles SIGTERM only once
	// it runs again.
	c.Signal(syscall.SIGCONT)
	select {
	case <-c.done:
		return
	case <-time.After(grace):
	}
	c.Signal(syscall.SIGKILL)
	if c.grp != nil {
		c.grp.Kill(5 * time.Second)
	}
	<-c.done
}

// Result is how a child ended.
type Result struct {
	// State is the child's exit state; Err is the error of waiting for it
	// (an *exec.ExitError for a non-zero exit or a signal).
	State *os.ProcessState
	Err   error
	// Signal ended the child (0 when it exited); ExitCode is its exit
	// status (-1 when signalled).
	Signal   syscall.Signal
	ExitCode int
	// Summary is the outcome of the child's summary record ("" when it
	// wrote none).
	Summary string
	// OOMKills is the group's oom-kill count; PeakBytes its highest usage
	// (0 when unknown or without a group).
	OOMKills  int64
	PeakBytes int64
	// LimitAtEnd is the group's memory limit when the child ended (0 when
	// unknown): the limit as started, raised by what the run held outside
	// its budget (the model step), which is the limit an OOM kill is at.
	LimitAtEnd int64
	// Limit and Enforced as started; Group is the group's directory ("").
	Limit    int64
	Enforced bool
	Group    string
	// Killed: the supervisor SIGKILLed the child (a stop past its grace).
	Killed bool
	// OOM: the memory limit ended the child (IsOOM).
	OOM bool
	// ScratchRemoved are the scratch folders the child left behind in
	// Spec.Scratch, removed by Wait; ScratchErr the first removal that failed.
	ScratchRemoved []string
	ScratchErr     error
}

// Wait waits for the child to exit, kills whatever it left in its process
// group and cgroup, waits for its output to drain, decides how it ended and
// removes the group. With Spec.WriteSummary it sends the summary the child
// did not write. Calling it again returns the same result.
func (c *Child) Wait() *Result {
	c.waitOnce.Do(func() { c.result = c.wait() })
	return c.result
}

func (c *Child) wait() *Result {
	<-c.done
	// Anything the child left behind (helpers holding the pipes) goes too.
	syscall.Kill(-c.Pid(), syscall.SIGKILL)
	if c.grp != nil {
		c.grp.Kill(5 * time.Second)
	}
	c.readers.Wait()

	r := &Result{State: c.cmd.ProcessState, Err: c.waitErr, ExitCode: -1, Limit: c.spec.Limit,
		Enforced: c.Enforced(), Killed: c.killed.Load()}
	if ps := c.cmd.ProcessState; ps != nil {
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok {
			switch {
			case ws.Exited():
				r.ExitCode = ws.ExitStatus()
			case ws.Signaled():
				r.Signal = ws.Signal()
			}
		}
	}
	c.mu.Lock()
	r.Summary = c.summary
	saw := c.sawSummary
	c.mu.Unlock()
	if c.grp != nil {
		r.Group = c.grp.Path
		r.PeakBytes, _ = c.grp.Peak()
		r.OOMKills, _ = c.grp.OOMKills()
		r.LimitAtEnd, _ = c.grp.MemoryMax()
	}
	r.OOM = IsOOM(Ending{OOMKills: r.OOMKills, Enforced: r.Enforced, Signal: r.Signal, Summary: r.Summary, KilledBySupervisor: r.Killed})
	c.removeGroup()
	r.ScratchRemoved, r.ScratchErr = RemoveScratch(c.spec.Scratch, c.Pid())
	if c.spec.WriteSummary && !saw {
		b, _ := json.Marshal(c.missingSummary(r))
		c.spec.Lines(b)
	}
	return r
}

// RaisedLimit is the group's limit when the child ended if the run raised
// it above the budget it started with (by what it holds outside the budget:
// the model step, device tiers; DESIGN §2), else 0. An OOM under a raised
// limit happened at that limit, not at the budget.
func (r *Result) RaisedLimit() int64 {
	if r.Limit > 0 && r.LimitAtEnd > r.Limit {
		return r.LimitAtEnd
	}
	return 0
}

// oomError says which limit killed the child (RaisedLimit, else the budget).
func oomError(r *Result) string {
	msg := fmt.Sprintf("killed by the memory limit of %d bytes (cgroup %s)", r.Limit, r.Group)
	if raised := r.RaisedLimit(); raised > 0 {
		msg = fmt.Sprintf("killed by the memory limit of %d bytes in force (the %d-byte budget raised by what the run holds outside it; cgroup %s)",
			raised, r.Limit, r.Group)
	}
	if r.OOMKills > 0 {
		msg += fmt.Sprintf("; the kernel's OOM killer killed %d process(es)", r.OOMKills)
	}
	return msg
}

// missingSummary is the summary of a child that wrote none.
func (c *Child) missingSummary(r *Result) metrics.SummaryRecord {
	sum := metrics.SummaryRecord{Type: metrics.TypeSummary, Outcome: metrics.OutcomeFailed, BestEpoch: -1, PeakCgroupBytes: r.PeakBytes}
	switch {
	case r.OOM:
		sum.Outcome = metrics.OutcomeOOM
		sum.Error = oomError(r)
	case c.interrupted.Load():
		sum.Outcome = metrics.OutcomeInterrupted
		sum.Error = fmt.Sprintf("training process ended by an interrupt: %v", r.Err)
	default:
		sum.Error = fmt.Sprintf("training process ended without a summary: %v", r.Err)
	}
	return sum
}

func (c *Child) removeGroup() {
	if c.grp == nil {
		return
	}
	// A group that cannot be removed now is cleaned up by the next queue
	// start (experiments) or stays empty under the parent group.
	_ = c.grp.Remove()
}

// readLines hands each line of r, without its newline, to out (lines
// longer than MaxLine are cut) until EOF.
func readLines(r io.Reader, out func([]byte)) {
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) <= MaxLine {
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if n := len(line); n > 0 && line[n-1] == '\n' {
			line = line[:n-1]
		}
		if len(line) > 0 {
			out(line)
			line = nil
		}
		if err != nil {
			return
		}
	}
}

func randHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
