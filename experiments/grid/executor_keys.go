package grid

// The executor keys of a grid file, "executor" and "slurm", and their pure
// checks (docs/ARCHITECTURE.md "Executors"): what a grid may ask of the
// Slurm executor is validated here, without the executor itself.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"outcore/internal/units"
)

// Executors: who starts a run (docs/ARCHITECTURE.md "Executors"), the
// values of a grid's "executor" key and of a stored run's.
const (
	ExecutorLocal = "local" // a child process of the queue process
	ExecutorSlurm = "slurm" // one Slurm job
)

// Executors lists the executor names a run may have.
var Executors = []string{ExecutorLocal, ExecutorSlurm}

// Bounds of the Slurm settings of a grid and of the queue.
const (
	MaxSlurmCPUs         = 4096     // slurm.cpus, --slurm-cpus
	MaxSlurmMemAllowance = 16 << 40 // slurm.mem_allowance
)

// SlurmGrid is a grid file's "slurm" object; each field set overrides the
// queue's SlurmOptions for the grid's runs.
type SlurmGrid struct {
	Partition    string `json:"partition,omitempty"`
	Args         string `json:"args,omitempty"` // sbatch options, shell-quoted: "--qos=low --comment='a b'"
	CPUs         int    `json:"cpus,omitempty"`
	Time         string `json:"time,omitempty"`
	NodeDataDir  string `json:"node_data_dir,omitempty"`
	MemAllowance string `json:"mem_allowance,omitempty"` // "512MiB"
}

// ValidExecutor checks an executor name.
func ValidExecutor(name string) error {
	for _, e := range Executors {
		if name == e {
			return nil
		}
	}
	return fmt.Errorf("unknown executor %q (executors: %s)", name, strings.Join(Executors, ", "))
}

// parseExecutorKey parses a grid's "executor" or "slurm" key.
func parseExecutorKey(g *Grid, key string, v json.RawMessage) error {
	switch key {
	case "executor":
		if err := json.Unmarshal(v, &g.Executor); err != nil {
			return invalid("executor", "want \"local\" or \"slurm\"")
		}
		if err := ValidExecutor(g.Executor); err != nil {
			return invalid("executor", "%v", err)
		}
	case "slurm":
		var sg SlurmGrid
		dec := json.NewDecoder(bytes.NewReader(v))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&sg); err != nil {
			if f := unknownField.FindStringSubmatch(err.Error()); f != nil {
				return invalid("slurm."+f[1], "unknown setting (slurm takes partition, args, cpus, time, node_data_dir, mem_allowance)")
			}
			return invalid("slurm", "want an object: %v", err)
		}
		if err := sg.Check(); err != nil {
			return err
		}
		g.Slurm = &sg
	}
	return nil
}

// Check validates a grid's Slurm settings: a problem per field at fault.
func (sg *SlurmGrid) Check() error {
	var ps ProblemList
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
	if sg.CPUs < 0 || sg.CPUs > MaxSlurmCPUs {
		ps.Add("slurm.cpus", "slurm.cpus: %d is not a whole number from 1 to %d", sg.CPUs, MaxSlurmCPUs)
	}
	if sg.Time != "" {
		if err := ValidSlurmTime(sg.Time); err != nil {
			ps.Add("slurm.time", "slurm.time: %v", err)
		}
	}
	if sg.NodeDataDir != "" {
		if err := NodeDataDirSyntax(sg.NodeDataDir); err != nil {
			ps.Add("slurm.node_data_dir", "slurm.node_data_dir: %v", err)
		}
	}
	if sg.MemAllowance != "" {
		if v, err := units.ParseMemLimit(sg.MemAllowance, 0); err != nil || v < MinMemLimit || v > MaxSlurmMemAllowance {
			ps.Add("slurm.mem_allowance", "slurm.mem_allowance: %q: want a size from %s to %s such as \"512MiB\"", sg.MemAllowance,
				units.Bytes(MinMemLimit), units.Bytes(MaxSlurmMemAllowance))
		}
	}
	return ps.Err()
}
