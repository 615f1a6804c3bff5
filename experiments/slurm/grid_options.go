package slurm

// A grid's "slurm" options block (docs/ARCHITECTURE.md "Executors"): the
// grid language hands it over unread (experiments/grid keeps it as the
// block under the executor's name); this executor checks it, at parse
// time without the queue (CheckGridOptions, its Registration's
// CheckOptions) and at creation against the queue's options
// (Executor.CheckGrid).

import (
	"bytes"
	"encoding/json"
	"regexp"

	"outcore/experiments/grid"
	"outcore/internal/units"
)

// Bounds of the Slurm settings of a grid and of the queue.
const (
	MaxCPUs         = 4096     // slurm.cpus, --slurm-cpus
	MaxMemAllowance = 16 << 40 // slurm.mem_allowance
)

// GridOptions is a grid file's "slurm" object; each field set overrides
// the queue's Options for the grid's runs.
type GridOptions struct {
	Partition    string `json:"partition,omitempty"`
	Args         string `json:"args,omitempty"` // sbatch options, shell-quoted: "--qos=low --comment='a b'"
	CPUs         int    `json:"cpus,omitempty"`
	Time         string `json:"time,omitempty"`
	NodeDataDir  string `json:"node_data_dir,omitempty"`
	MemAllowance string `json:"mem_allowance,omitempty"` // "512MiB"
}

var unknownField = regexp.MustCompile(`unknown field "([^"]+)"`)

// ParseGridOptions reads and checks a grid's "slurm" block (nil for none):
// the error lists a grid problem per field at fault.
func ParseGridOptions(block json.RawMessage) (*GridOptions, error) {
	if len(block) == 0 {
		return nil, nil
	}
	var sg GridOptions
	dec := json.NewDecoder(bytes.NewReader(block))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sg); err != nil {
		var ps grid.ProblemList
		if f := unknownField.FindStringSubmatch(err.Error()); f != nil {
			return nil, ps.Add(Name+"."+f[1], "%s.%s: unknown setting (slurm takes partition, args, cpus, time, node_data_dir, mem_allowance)", Name, f[1]).Err()
		}
		return nil, ps.Add(Name, "%s: want an object: %v", Name, err).Err()
	}
	if err := sg.Check(); err != nil {
		return nil, err
	}
	return &sg, nil
}

// CheckGridOptions is the Registration's CheckOptions.
func CheckGridOptions(block json.RawMessage) error {
	_, err := ParseGridOptions(block)
	return err
}

// Check validates a grid's Slurm settings: a problem per field at fault.
func (sg *GridOptions) Check() error {
	var ps grid.ProblemList
	if sg.Partition != "" {
		if err := ValidPartition(sg.Partition); err != nil {
			ps.Add("slurm.partition", "slurm.partition: %v", err)
		}
	}
	if sg.Args != "" {
		if _, err := ParseSbatchArgs(sg.Args); err != nil {
			ps.Add("slurm.args", "slurm.args: %v", err)
		}
	}
	if sg.CPUs < 0 || sg.CPUs > MaxCPUs {
		ps.Add("slurm.cpus", "slurm.cpus: %d is not a whole number from 1 to %d", sg.CPUs, MaxCPUs)
	}
	if sg.Time != "" {
		if err := ValidTime(sg.Time); err != nil {
			ps.Add("slurm.time", "slurm.time: %v", err)
		}
	}
	if sg.NodeDataDir != "" {
		if err := NodeDataDirSyntax(sg.NodeDataDir); err != nil {
			ps.Add("slurm.node_data_dir", "slurm.node_data_dir: %v", err)
		}
	}
	if sg.MemAllowance != "" {
		if v, err := units.ParseMemLimit(sg.MemAllowance, 0); err != nil || v < grid.MinMemLimit || v > MaxMemAllowance {
			ps.Add("slurm.mem_allowance", "slurm.mem_allowance: %q: want a size from %s to %s such as \"512MiB\"", sg.MemAllowance,
				units.Bytes(grid.MinMemLimit), units.Bytes(MaxMemAllowance))
		}
	}
	return ps.Err()
}
