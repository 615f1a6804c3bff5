package slurm

// Slurm's own client tools, run as commands: sbatch submits, squeue lists
// (one call per poll for every job of this data directory), scontrol and
// sacct describe a job that has ended, scancel cancels
// (docs/ARCHITECTURE.md "Executors"). The parsers of their output are pure
// functions with tests and fuzz targets (slurm_cli_test.go).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"outcore/internal/units"
)

// ErrJobUnknown: Slurm's tool does not know the job (purged or never existed).
var ErrJobUnknown = errors.New("job unknown to Slurm")

// CLI runs Slurm's client commands.
type CLI struct {
	BinDir  string // directory of the commands; "" = $PATH
	timeout time.Duration
}

func (c CLI) path(name string) string {
	if c.BinDir != "" {
		return filepath.Join(c.BinDir, name)
	}
	return name
}

// run runs one command and returns its stdout; the error carries stderr.
func (c CLI) run(ctx context.Context, name string, args ...string) (string, error) {
	t := c.timeout
	if t <= 0 {
		t = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, t)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.path(name), args...)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	err := cmd.Run()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = strings.TrimSpace(out.String())
		}
		if msg != "" {
			return out.String(), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, units.Clip(msg, 400))
		}
		return out.String(), fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return out.String(), nil
}

// Submit submits a batch script and returns the job id.
func (c CLI) Submit(ctx context.Context, script string, extra []string) (string, error) {
	args := append([]string{"--parsable"}, extra...)
	out, err := c.run(ctx, "sbatch", append(args, script)...)
	if err != nil {
		return "", err
	}
	return ParseSbatch(out)
}

// squeueFormat is the squeue output format ParseSqueue reads.
const squeueFormat = "%i|%j|%T|%N|%r"

// Queue lists the jobs of user that the controller knows, finished ones
// included (they stay for MinJobAge).
func (c CLI) Queue(ctx context.Context, user string) ([]JobInfo, error) {
	args := []string{"--noheader", "--states=all", "--format=" + squeueFormat}
	if user != "" {
		args = append(args, "--user="+user)
	}
	out, err := c.run(ctx, "squeue", args...)
	if err != nil {
		return nil, err
	}
	return ParseSqueue(out), nil
}

// Show describes one job with scontrol (exit code and restarts included).
// The error wraps ErrJobUnknown when the controller does not know it.
func (c CLI) Show(ctx context.Context, id string) (JobInfo, error) {
	out, err := c.run(ctx, "scontrol", "--oneliner", "show", "job", id)
	if err != nil {
		if strings.Contains(err.Error(), "Invalid job id") {
			return JobInfo{}, fmt.Errorf("%w: %v", ErrJobUnknown, err)
		}
		return JobInfo{}, err
	}
	j, ok := ParseScontrolJob(out)
	if !ok {
		return JobInfo{}, fmt.Errorf("scontrol show job %s: unreadable output %q", id, units.Clip(out, 200))
	}
	return j, nil
}

// Acct describes one job from Slurm's accounting (sacct). The error wraps
// ErrJobUnknown when accounting has no record of it.
func (c CLI) Acct(ctx context.Context, id string) (JobInfo, error) {
	out, err := c.run(ctx, "sacct", "--jobs="+id, "--allocations", "--noheader", "--parsable2",
		"--format=JobID,JobName,State,ExitCode,NodeList")
	if err != nil {
		return JobInfo{}, err
	}
	for _, j := range ParseSacct(out) {
		if j.ID == id {
			return j, nil
		}
	}
	return JobInfo{}, fmt.Errorf("%w: sacct has no record of job %s", ErrJobUnknown, id)
}

// Cancel cancels a job (scancel: SIGTERM, SIGKILL after the cluster's
// KillWait).
func (c CLI) Cancel(ctx context.Context, id string) error {
	_, err := c.run(ctx, "scancel", id)
	return err
}

// ParseSbatch reads `sbatch --parsable`'s answer: "123" or "123;cluster".
func ParseSbatch(out string) (string, error) {
	s := strings.TrimSpace(out)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 { // warnings may come first
		s = strings.TrimSpace(s[i+1:])
	}
	id, _, _ := strings.Cut(s, ";")
	if !jobIDRE.MatchString(id) {
		return "", fmt.Errorf("sbatch answered %q, not a job id", units.Clip(strings.TrimSpace(out), 200))
	}
	return id, nil
}

var jobIDRE = regexp.MustCompile(`^[0-9]+(_[0-9]+)?$`)

// ParseSqueue reads squeue lines in squeueFormat ("%i|%j|%T|%N|%r"). A job
// name may itself hold '|': the id is the first field, state, nodes and
// reason the last three. Lines that do not fit are skipped.
func ParseSqueue(out string) []JobInfo {
	var jobs []JobInfo
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		f := strings.Split(line, "|")
		if len(f) < 5 {
			continue
		}
		n := len(f)
		id := strings.TrimSpace(f[0])
		if !jobIDRE.MatchString(id) {
			continue
		}
		jobs = append(jobs, JobInfo{ID: id, Name: strings.Join(f[1:n-3], "|"), State: NormalizeJobState(f[n-3]),
			Node: strings.TrimSpace(f[n-2]), Reason: strings.TrimSpace(f[n-1]), Restarts: -1, Known: true})
	}
	return jobs
}

// scontrolKey finds the "Key=" tokens of `scontrol show job --oneliner`.
var scontrolKey = regexp.MustCompile(`(?:^|\s)([A-Za-z][A-Za-z0-9_/:]*)=`)

// ParseScontrolJob reads `scontrol show job --oneliner`: space-separated
// Key=Value pairs (a value ends where the next " Key=" begins).
func ParseScontrolJob(out string) (JobInfo, bool) {
	out = strings.TrimSpace(out)
	if i := strings.IndexByte(out, '\n'); i >= 0 {
		out = out[:i]
	}
	locs := scontrolKey.FindAllStringSubmatchIndex(out, -1)
	kv := map[string]string{}
	for i, l := range locs {
		end := len(out)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		key := out[l[2]:l[3]]
		if _, dup := kv[key]; !dup {
			kv[key] = strings.TrimSpace(out[l[1]:end])
		}
	}
	id, state := kv["JobId"], NormalizeJobState(kv["JobState"])
	if !jobIDRE.MatchString(id) || state == "" { // "JobState=*" names no state either
		return JobInfo{}, false
	}
	j := JobInfo{ID: id, Name: kv["JobName"], State: state, Reason: kv["Reason"],
		ExitCode: kv["ExitCode"], Restarts: -1, Known: true}
	if n := kv["NodeList"]; n != "(null)" {
		j.Node = n
	}
	if r, err := strconv.Atoi(kv["Restarts"]); err == nil {
		j.Restarts = r
	}
	return j, true
}

// ParseSacct reads `sacct --parsable2 --format=JobID,JobName,State,ExitCode,NodeList`
// lines. Step lines ("123.batch") are skipped.
func ParseSacct(out string) []JobInfo {
	var jobs []JobInfo
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(strings.TrimRight(line, "\r"), "|")
		if len(f) < 5 {
			continue
		}
		n := len(f)
		id := strings.TrimSpace(f[0])
		if !jobIDRE.MatchString(id) {
			continue
		}
		node := strings.TrimSpace(f[n-1])
		if node == "None assigned" {
			node = ""
		}
		jobs = append(jobs, JobInfo{ID: id, Name: strings.Join(f[1:n-3], "|"), State: NormalizeJobState(f[n-3]),
			ExitCode: strings.TrimSpace(f[n-2]), Node: node, Restarts: -1, Known: true})
	}
	return jobs
}
