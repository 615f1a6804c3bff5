package train

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestValidateNamesBadField(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(c *Config)
		field string
	}{
		{"no dataset", func(c *Config) { c.Dataset = "" }, "dataset"},
		{"unknown system", func(c *Config) { c.System = "nope" }, "system"},
		{"bad model", func(c *Config) { c.Model = "mlp" }, "model"},
		{"empty fanout", func(c *Config) { c.Fanout = nil }, "fanout"},
		{"zero fanout", func(c *Config) { c.Fanout = []int{10, 0} }, "fanout"},
		{"layers mismatch", func(c *Config) { c.Layers = 2 }, "layers"},
		{"hidden", func(c *Config) { c.Hidden = 0 }, "hidden"},
		{"heads divide", func(c *Config) { c.Model = "gat"; c.Heads = 3; c.Hidden = 64 }, "heads"},
		{"dropout", func(c *Config) { c.Dropout = 1 }, "dropout"},
		{"batch", func(c *Config) { c.Batch = -1 }, "batch"},
		{"epochs", func(c *Config) { c.Epochs = 0 }, "epochs"},
		{"lr", func(c *Config) { c.LR = 0 }, "lr"},
		{"weight decay", func(c *Config) { c.WeightDecay = -1 }, "weight_decay"},
		{"eval", func(c *Config) { c.Eval = "half" }, "eval"},
		{"eval fanout length", func(c *Config) { c.EvalFanout = []int{5} }, "eval_fanout"},
		{"io", func(c *Config) { c.IO = "floppy" }, "io"},
		{"mem limit", func(c *Config) { c.MemLimit = "lots" }, "mem_limit"},
		{"model mem", func(c *Config) { c.ModelMem = "gpu" }, "model_mem"},
		{"warmup", func(c *Config) { w := 10; c.WarmupEpochs = &w }, "warmup_epochs"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			c.Dataset = "x"
			tc.edit(&c)
			err := c.Validate()
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("got %v, want ErrConfig", err)
			}
			if !strings.Contains(err.Error(), tc.field+":") {
				t.Fatalf("error %q does not name field %q", err, tc.field)
			}
		})
	}
	c := DefaultConfig()
	c.Dataset = "x"
	c.Layers = 0
	if err := c.Validate(); err != nil || c.Layers != 0 {
		t.Fatalf("Validate changed the configuration or refused its defaults: %v layers=%d", err, c.Layers)
	}
	c.Normalize()
	if err := c.Validate(); err != nil || c.Layers != 3 || c.EvalBatch != 1000 {
		t.Fatalf("defaults: %v layers=%d eval_batch=%d", err, c.Layers, c.EvalBatch)
	}
	c.Eval = EvalFull
	if f := c.EvalFanouts(); len(f) != 3 || f[0] != -1 || f[2] != -1 {
		t.Fatalf("full eval fanouts %v", f)
	}
}

func TestResolveMemLimit(t *testing.T) {
	c := Config{MemLimit: "50%"}
	if err := c.ResolveMemLimit(4096); err != nil || c.MemLimitBytes != 2048 {
		t.Fatalf("resolve: %d %v", c.MemLimitBytes, err)
	}
}

func TestLoadConfigFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "run.json")
	os.WriteFile(p, []byte(`{"dataset":"cora","model":"gcn","fanout":[-1,-1],"hidden":16,"options":{"cache":"25%"}}`), 0o644)
	c, err := LoadConfigFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if c.Dataset != "cora" || c.Model != "gcn" || len(c.Fanout) != 2 || c.Hidden != 16 || c.Epochs != DefaultConfig().Epochs {
		t.Fatalf("loaded %+v", c)
	}
	if v, err := Opts(c.Options).Bytes("cache", 400, 0); err != nil || v != 100 {
		t.Fatalf("opts bytes %d %v", v, err)
	}
	os.WriteFile(p, []byte(`{"dataset":"cora","fanouts":[1]}`), 0o644)
	if _, err := LoadConfigFile(p); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "fanouts") {
		t.Fatalf("unknown field: %v", err)
	}
}

func TestOpts(t *testing.T) {
	o := Opts{"n": "4", "f": "0.5", "b": "true", "bad": "x"}
	if v, err := o.Int("n", 1); v != 4 || err != nil {
		t.Fatal("int")
	}
	if v, err := o.Int("missing", 7); v != 7 || err != nil {
		t.Fatal("default")
	}
	if v, err := o.Float("f", 0); v != 0.5 || err != nil {
		t.Fatal("float")
	}
	if v, err := o.Bool("b", false); !v || err != nil {
		t.Fatal("bool")
	}
	if _, err := o.Int("bad", 0); err == nil || !strings.Contains(err.Error(), "options.bad") {
		t.Fatalf("bad int: %v", err)
	}
}
