package train

import (
	"maps"
	"strings"
	"testing"

	"outcore/engine/testbed"
)

// TestApplyTestbed checks the rules by which a run takes a paper's
// mapping (ApplyTestbed): what the config leaves unset is the mapping's,
// what it sets wins and is recorded, and this-host changes nothing.
func TestApplyTestbed(t *testing.T) {
	s := testbed.Settings{Testbed: "paper-x", Emulated: true, AccelProfile: "v100-pcie-from-h100-pyg",
		Host:    testbed.Memory{ShareBytes: 1 << 20, BatchBytes: 2 << 20, Rule: "host rule"},
		Device:  testbed.Memory{ShareBytes: 3 << 20, BatchBytes: 4 << 20, Rule: "device rule"},
		IODepth: 16, IODepthRule: "depth rule", AccelRule: "accel rule",
		Dilation: 2.5, DilationRule: "dilation rule", Epochs: 4, EpochsRule: "epochs rule"}
	base := func(system string) Config {
		c := DefaultConfig()
		c.Dataset, c.System, c.Testbed, c.Epochs = "tiny", system, "paper-x", 0
		return c
	}
	cases := []struct {
		name    string
		cfg     func() Config
		s       testbed.Settings
		compute string
		dil     float64
		epochs  int
		devMem  string
		depth   string
		lines   []string // parts of deviations, in addition to s.Deviations
	}{
		{"defaults (ginex)", func() Config { return base("ginex") }, s, "model:v100-pcie-from-h100-pyg", 2.5, 4, "4194304", "16",
			[]string{"compute model:v100-pcie-from-h100-pyg (the paper's GPU)", "dilated × 2.5", "4 epochs (the mapping's)", "device budget 4194304 bytes (the mapping's)", "option io_depth=16", "the mapping's limit is 1048576 bytes"}},
		{"share-governed device (diskgnn), no io depth", func() Config { return base("diskgnn") }, s, "model:v100-pcie-from-h100-pyg", 2.5, 4, "3145728", "",
			[]string{"device budget 3145728 bytes", "the mapping's limit is 1048576 bytes"}},
		{"explicit compute cpu wins, no dilation", func() Config { c := base("pyg+"); c.Compute = "cpu"; return c }, s, "cpu", 0, 4, "4194304", "16",
			[]string{"compute cpu set by the run's config wins", "step dilation not applied"}},
		{"explicit epochs, dilation, device_mem, io_threads and mem_limit win", func() Config {
			c := base("ginex")
			c.Epochs, c.StepDilation, c.DeviceMem, c.MemLimit = 7, 1.5, "1MiB", "1GiB"
			c.Options = map[string]string{"io_threads": "4"}
			return c
		}, s, "model:v100-pcie-from-h100-pyg", 1.5, 7, "1MiB", "",
			[]string{"7 epochs set by the run's config win over the mapping's 4", "step dilation 1.5 set by the run's config wins", "device budget set by the run's config (\"1MiB\") wins", "I/O concurrency set by the run's options wins", "the run's own mem_limit \"1GiB\""}},
		{"no dilation derivable, no device budget in batches", func() Config { return base("gnndrive") }, func() testbed.Settings {
			x := s
			x.Dilation, x.Device.BatchBytes = 0, 0
			return x
		}(), "model:v100-pcie-from-h100-pyg", 0, 4, "", "",
			[]string{"device budget not derivable"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.cfg()
			before := maps.Clone(cfg.Options)
			opts := cfg.Options
			lines := ApplyTestbed(&cfg, c.s)
			if cfg.Compute != c.compute || cfg.StepDilation != c.dil || cfg.Epochs != c.epochs || cfg.DeviceMem != c.devMem || cfg.Options[IODepthOption] != c.depth {
				t.Errorf("compute %q dilation %v epochs %d device_mem %q io_depth %q; want %q %v %d %q %q",
					cfg.Compute, cfg.StepDilation, cfg.Epochs, cfg.DeviceMem, cfg.Options[IODepthOption], c.compute, c.dil, c.epochs, c.devMem, c.depth)
			}
			if !maps.Equal(opts, before) {
				t.Errorf("the caller's options changed: %v, were %v", opts, before)
			}
			all := strings.Join(lines, "\n")
			for _, d := range c.s.Deviations(cfg.System) {
				if !strings.Contains(all, d) {
					t.Errorf("deviation %q missing", d)
				}
			}
			for _, w := range c.lines {
				if !strings.Contains(all, w) {
					t.Errorf("no deviation says %q:\n%s", w, all)
				}
			}
		})
	}
	t.Run("this-host changes nothing", func(t *testing.T) {
		cfg := base("ginex")
		cfg.Testbed, cfg.Epochs = "", 10
		want := cfg
		if lines := ApplyTestbed(&cfg, testbed.Settings{Testbed: testbed.ThisHost}); lines != nil || cfg.Compute != want.Compute || cfg.Epochs != 10 || cfg.Options != nil || cfg.DeviceMem != "" {
			t.Errorf("this-host applied %q: %+v", lines, cfg)
		}
	})
}

// TestConfigTestbedChecked: an unknown testbed is an error naming the
// field and the testbeds there are; epochs 0 is the mapping's only under a
// paper's testbed.
func TestConfigTestbedChecked(t *testing.T) {
	c := DefaultConfig()
	c.Dataset = "tiny"
	c.Testbed = "no-such-host"
	err := c.Validate()
	if err == nil || !strings.Contains(err.Error(), "testbed: unknown testbed \"no-such-host\"") || !strings.Contains(err.Error(), "gnndrive-icpp24") {
		t.Errorf("unknown testbed: %v", err)
	}
	for _, tb := range testbed.Names() {
		c.Testbed, c.Epochs = tb, 0
		err := c.Validate()
		if paper := tb != testbed.ThisHost; paper != (err == nil) {
			t.Errorf("testbed %s with epochs 0: %v", tb, err)
		}
	}
	c.Testbed, c.Epochs, c.StepDilation = "", 1, -1
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "step_dilation") {
		t.Errorf("step_dilation -1: %v", err)
	}
}
