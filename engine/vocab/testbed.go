package vocab

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"outcore/engine/accel"
	"outcore/engine/dataset"
	"outcore/engine/testbed"
)

// IODepthOption is the variant option of the thread-per-request systems
// (ginex, pyg+) that emulates a host's I/O threads (DESIGN §13).
const IODepthOption = "io_depth"

// checkTestbed checks a configuration's testbed against the profiles
// engine/testbed holds ("" is this-host).
func checkTestbed(name string) error {
	if name == "" {
		return nil
	}
	if names := testbed.Names(); !slices.Contains(names, name) {
		return fmt.Errorf("unknown testbed %q (have %s)", name, strings.Join(names, ", "))
	}
	return nil
}

// PaperTestbed reports whether the configuration's testbed emulates a
// paper's host (not "" nor this-host).
func (c *Config) PaperTestbed() bool {
	return c.Testbed != "" && c.Testbed != testbed.ThisHost
}

// MapTestbed computes the mapping of cfg's testbed (this-host when it
// names none) for the dataset of meta, with this host's storage st (zero
// fields: not measured). It is pure: engine/train reads the storage
// profile, the grid's floor check passes none.
func MapTestbed(cfg Config, meta dataset.Meta, st testbed.Storage) (testbed.Settings, error) {
	name := cfg.Testbed
	if name == "" {
		name = testbed.ThisHost
	}
	tb, err := testbed.Load(name)
	if err != nil {
		return testbed.Settings{}, fmt.Errorf("%w: testbed: %v", ErrConfig, err)
	}
	batch := cfg.Batch
	if batch <= 0 { // the whole training split in one batch
		batch = int(max(meta.Train, 1))
	}
	fanout := make([]int, len(cfg.Fanout))
	for i, f := range cfg.Fanout {
		if f < 0 { // all neighbours: at most every node (BatchRows caps)
			f = int(min(meta.Nodes, 1<<20))
		}
		fanout[i] = f
	}
	return testbed.Map(tb, testbed.DatasetShape{Name: meta.Name, Nodes: meta.Nodes, FeatureDim: meta.FeatureDim},
		testbed.BatchShape{Batch: batch, Fanout: fanout}, st)
}

// ApplyTestbed applies the settings s of a paper's testbed to cfg and
// returns the lines the run records among its deviations: the mapping's
// rule words (Settings.Deviations) and what the run took of it. It is pure.
// The rules, one for every variant:
//   - compute: model:<the paper GPU's profile> when the config leaves
//     compute empty; a compute the config sets wins (recorded);
//   - step dilation: the mapping's when the config leaves it 0 and the
//     run is in model mode; an explicit one wins; none outside model mode;
//   - epochs: the mapping's (at least testbed.MinEpochs) when the config's
//     epochs is 0; a positive epochs is the config's (recorded, with a
//     warning below MinEpochs: no warm epoch apart from the cold one);
//   - device budget: the mapping's, in the system's governing unit, when
//     the config sets neither device_mem nor device_mem_bytes (when the
//     mapping has none in that unit, the run's own, recorded);
//   - I/O depth (ginex, pyg+): option io_depth = the mapping's depth when
//     the config sets neither io_depth nor io_threads;
//   - host memory: not applied here (the runner's cgroup); recorded as the
//     mapping's limit, or the config's own mem_limit when it has one.
func ApplyTestbed(cfg *Config, s testbed.Settings) []string {
	if !s.Emulated {
		return nil
	}
	out := s.Deviations(cfg.System)
	note := func(format string, a ...any) {
		out = append(out, "testbed "+s.Testbed+": "+fmt.Sprintf(format, a...))
	}
	mode := "model:" + s.AccelProfile
	if cfg.Compute == "" {
		cfg.Compute = mode
		note("compute %s (the paper's GPU)", mode)
	} else {
		note("compute %s set by the run's config wins over the mapping's %s", cfg.Compute, mode)
	}
	m, err := accel.ParseMode(cfg.Compute)
	switch {
	case err != nil || m.Kind != accel.ComputeModel:
		note("step dilation not applied: compute %s models no step", cfg.Compute)
	case cfg.StepDilation > 0:
		note("step dilation %.3g set by the run's config wins over the mapping's %.3g", cfg.StepDilation, s.Dilation)
	case s.Dilation > 0:
		cfg.StepDilation = s.Dilation
		note("modelled step time dilated × %.3g", s.Dilation)
	}
	if cfg.Epochs <= 0 {
		cfg.Epochs = s.Epochs
		note("%d epochs (the mapping's)", s.Epochs)
	} else if cfg.Epochs != s.Epochs {
		note("%d epochs set by the run's config win over the mapping's %d", cfg.Epochs, s.Epochs)
	}
	host, device, _ := s.For(cfg.System)
	if cfg.DeviceMem == "" && cfg.DeviceMemBytes == 0 && device > 0 {
		cfg.DeviceMem = strconv.FormatInt(device, 10)
		note("device budget %d bytes (the mapping's)", device)
	} else if device > 0 {
		note("device budget set by the run's config (%q) wins over the mapping's %d bytes", cfg.DeviceMem, device)
	} else {
		note("device budget not derivable in the system's unit: the run keeps its own device_mem %q (default %s)", cfg.DeviceMem, DefaultDeviceMem)
	}
	if testbed.ThreadPerRequest(cfg.System) {
		_, depth := cfg.Options[IODepthOption]
		_, threads := cfg.Options["io_threads"]
		switch {
		case depth || threads:
			note("I/O concurrency set by the run's options wins over the mapping's depth %d", s.IODepth)
		case s.IODepth > 0:
			opts := maps.Clone(cfg.Options)
			if opts == nil {
				opts = map[string]string{}
			}
			opts[IODepthOption] = strconv.Itoa(s.IODepth)
			cfg.Options = opts
			note("option %s=%d", IODepthOption, s.IODepth)
		}
	}
	if cfg.MemLimitBytes > 0 && cfg.MemLimitBytes == host {
		note("host memory limit %d bytes (the mapping's, given to the runner as --mem-limit)", host)
	} else if cfg.MemLimit != "" || cfg.MemLimitBytes > 0 {
		note("host memory: the run's own mem_limit %q (%d bytes); the mapping's is %d bytes", cfg.MemLimit, cfg.MemLimitBytes, host)
	} else {
		note("host memory: the mapping's limit is %d bytes (the runner's --mem-limit; this run has none)", host)
	}
	return out
}
