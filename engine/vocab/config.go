package vocab

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"outcore/internal/units"
)

// ErrConfig marks an invalid configuration; the message names the field.
var ErrConfig = errors.New("invalid config")

// Node numberings (Config.IDs; dataset.Meta.Numbering).
const (
	IDsScattered = "scattered" // ids scattered over the communities by a keyed permutation
	IDsLocal     = "local"     // ids numbered community by community, most popular first
)

// Evaluation modes (Config.Eval).
const (
	// EvalSampled runs inference on sampled neighbourhoods with EvalFanout
	// (default: the training fanouts), with a fixed RNG so every epoch
	// evaluates on the same sample.
	EvalSampled = "sampled"
	// EvalFull runs inference on full neighbourhoods (every fanout -1).
	EvalFull = "full"
)

// Trainer devices (Config.Device).
const (
	DeviceCPU  = "cpu"
	DeviceCUDA = "cuda"
	DeviceAuto = "auto"
)

// Accounting of the model step under a memory limit (Config.ModelMem).
const (
	ModelMemDevice = "device"
	ModelMemHost   = "host"
)

// Config is one training run. The `outcore train` flags and the JSON file
// given by --config map onto it field for field (JSON names below).
type Config struct {
	Dataset string `json:"dataset"`
	DataDir string `json:"data_dir,omitempty"`
	System  string `json:"system"`

	Model   string  `json:"model"`  // sage, gcn or gat
	Layers  int     `json:"layers"` // = len(Fanout)
	Hidden  int     `json:"hidden"`
	Heads   int     `json:"heads"` // gat only
	Dropout float64 `json:"dropout"`

	// Fanout is the number of neighbours sampled per hop, seeds' hop first;
	// -1 takes all neighbours.
	Fanout []int `json:"fanout"`
	Batch  int   `json:"batch"` // seeds per training batch; 0 = the whole training split

	Epochs      int     `json:"epochs"`
	LR          float64 `json:"lr"`
	WeightDecay float64 `json:"weight_decay"`
	Seed        int64   `json:"seed"`

	// RowNormalize divides every feature row by its sum (Planetoid
	// preprocessing; GCN on Cora needs it).
	RowNormalize bool `json:"row_normalize,omitempty"`

	// Eval is "sampled" (default) or "full".
	Eval string `json:"eval"`
	// EvalFanout overrides the fanouts of sampled evaluation.
	EvalFanout []int `json:"eval_fanout,omitempty"`
	// EvalBatch is the number of nodes per evaluation batch (default Batch,
	// at least 1000; under a memory limit a tenth of Batch, at most 100).
	EvalBatch int `json:"eval_batch,omitempty"`
	// EvalEvery evaluates every n-th epoch (and always the last); default 1.
	EvalEvery int `json:"eval_every,omitempty"`
	// EvalMaxNodes caps the validation and test sets evaluated each epoch:
	// a larger split is replaced by a fixed random subset of this size (the
	// same every epoch; a log record says so). 0 = DefaultEvalMaxNodes,
	// -1 = no cap.
	EvalMaxNodes int `json:"eval_max_nodes,omitempty"`
	// TrainMaxNodes caps the training split: a larger one is replaced by a
	// fixed random subset of this size, so an epoch has at most
	// TrainMaxNodes / Batch full batches (bounded runs for checks such as
	// the memory contract's on `medium`; the run records it as a
	// deviation). 0 = the whole split.
	TrainMaxNodes int `json:"train_max_nodes,omitempty"`
	// IDs is the node numbering the run's dataset must have: "scattered"
	// or "local" (ids numbered community by community), "" = any. A grid's
	// ids axis sets it on each cell together with the dataset renumbered
	// so (experiments/grid.IDsDataset); the run refuses a dataset whose
	// generator config says otherwise, so that a cell's label is never
	// wrong about the graph it trained on.
	IDs string `json:"ids,omitempty"`

	// WarmupEpochs are the first epochs flagged warmup in their records and
	// left out of the summary's mean epoch time. Default 1 when Epochs > 1.
	WarmupEpochs *int `json:"warmup_epochs,omitempty"`

	// IO is the storage backend: uring, pread, mmap or auto.
	IO string `json:"io"`
	// QueueDepth is the I/O depth per reader (0 = storage default).
	QueueDepth int `json:"queue_depth,omitempty"`
	// AllowBuffered lets storage fall back to page-cache reads (with a log
	// line) where the file system refuses O_DIRECT, e.g. tmpfs in tests.
	// Measurement runs leave it off.
	AllowBuffered bool `json:"allow_buffered,omitempty"`

	// MemLimit is the memory budget: bytes with a unit ("2GiB", "512MB",
	// "1048576") or a percentage of the dataset's feature bytes ("25%").
	// "" = no limit. Resolved into MemLimitBytes by Resolve.
	MemLimit      string `json:"mem_limit,omitempty"`
	MemLimitBytes int64  `json:"mem_limit_bytes,omitempty"`
	// ModelMem says where the CPU trainer's model step (parameters,
	// optimizer state, activations and gradients) is accounted under a
	// memory limit: "device" (default) holds it outside the budget, as the
	// GPU memory it is in the papers (the cgroup limit grows by the profiled
	// step size, recorded in the run's deviations); "host" charges it to the
	// budget like any other memory.
	ModelMem string `json:"model_mem,omitempty"`
	// DeviceMem is the device budget (device_mem.go): bytes with a unit, a
	// percentage of the feature bytes, or "none"; "" = DefaultDeviceMem.
	// Resolved into DeviceMemBytes by ResolveDeviceMem.
	DeviceMem      string `json:"device_mem,omitempty"`
	DeviceMemBytes int64  `json:"device_mem_bytes,omitempty"`

	// Compute is what consumes each ready batch (DESIGN §10): "cpu" (or
	// "", the CPU trainer), "none" (the loader alone: the batch's
	// features are checksummed and released) or "model:PROFILE" (the
	// batch is held for the step time an accelerator profile gives,
	// without using the CPU). Loss and accuracy are measured in cpu only.
	Compute string `json:"compute,omitempty"`

	// Device is where the trainer runs: "cpu" (default, engine/nn), "cuda"
	// (engine/cuda on GPU 0; an error without a usable GPU or for a model
	// the GPU trainer lacks) or "auto" (the GPU when usable, else the CPU,
	// recorded in the run's deviations).
	Device string `json:"device,omitempty"`

	// Testbed names the host the run emulates (engine/testbed, DESIGN
	// §13): "" or "this-host" is this host as it is (no emulation); a
	// paper's testbed maps the run's compute, epochs, device budget, step
	// dilation and I/O depth from its profile before the variant prepares
	// (engine/train testbed.go), each recorded among its deviations.
	Testbed string `json:"testbed,omitempty"`
	// StepDilation multiplies the modelled step time in compute
	// model:PROFILE (0 = 1, not dilated): the ratio of the paper SSD's
	// published figures to this host's measured storage (DESIGN §13). A
	// paper testbed sets it when the config leaves it 0.
	StepDilation float64 `json:"step_dilation,omitempty"`

	// Options are variant-specific settings (cache sizes, superbatch size,
	// worker counts, ...), read by each System through Opts.
	Options map[string]string `json:"options,omitempty"`
}

// DefaultEvalMaxNodes is the default cap on evaluated nodes per split: with
// 10,000 nodes the standard error of an accuracy is at most 0.5 points, and
// evaluating a large split in full would cost more I/O than the epoch.
const DefaultEvalMaxNodes = 10000

// DefaultConfig returns the defaults of `outcore train`: 3-layer GraphSAGE
// (Layers 0 = derived from Fanout),
// 256 hidden, fanout 10,10,10, batch 1000, 10 epochs, lr 0.003, the reference
// system.
func DefaultConfig() Config {
	return Config{
		System: ReferenceName, Model: "sage", Hidden: 256, Heads: 4,
		Dropout: 0.5, Fanout: []int{10, 10, 10}, Batch: 1000, Epochs: 10,
		LR: 0.003, Seed: 1, Eval: EvalSampled, EvalEvery: 1, IO: "auto",
	}
}

// LoadConfigFile reads a JSON config file over the defaults; unknown fields
// are an error naming the field.
func LoadConfigFile(path string) (Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return DefaultConfig(), fmt.Errorf("read config %s: %w", path, err)
	}
	cfg, err := ParseConfig(b)
	if err != nil {
		return cfg, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// ParseConfig reads a JSON run configuration over the defaults; unknown
// fields and data after the object are an error naming what is wrong. The
// result is not validated (see Validate).
func ParseConfig(b []byte) (Config, error) {
	cfg := DefaultConfig()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return cfg, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	if dec.More() {
		return cfg, fmt.Errorf("%w: data after the JSON object", ErrConfig)
	}
	return cfg, nil
}

// Warmup returns the number of warm-up epochs.
func (c *Config) Warmup() int {
	if c.WarmupEpochs != nil {
		return *c.WarmupEpochs
	}
	if c.Epochs > 1 {
		return 1
	}
	return 0
}

// Normalize fills the defaults a configuration derives from its other
// fields (System, Layers from Fanout, Eval, EvalBatch, EvalEvery,
// EvalMaxNodes); it checks nothing. Validate is the check, pure: callers
// normalize, then validate.
func (c *Config) Normalize() {
	if c.System == "" {
		c.System = ReferenceName
	}
	if c.Layers == 0 {
		c.Layers = len(c.Fanout)
	}
	if c.Eval == "" {
		c.Eval = EvalSampled
	}
	if c.EvalBatch == 0 {
		c.EvalBatch = max(c.Batch, 1000)
		if c.MemLimit != "" || c.MemLimitBytes > 0 {
			// Under a memory budget, evaluation (not part of any paper's
			// epoch) must fit next to what the variant keeps between
			// epochs: a tenth of a training batch's input at a time.
			c.EvalBatch = max(min(c.Batch, 1000)/10, 1)
		}
	}
	if c.EvalEvery == 0 {
		c.EvalEvery = 1
	}
	if c.EvalMaxNodes == 0 {
		c.EvalMaxNodes = DefaultEvalMaxNodes
	}
}

// Validate checks every field of the configuration as Normalize would
// complete it, and changes nothing (zero values that Normalize fills are
// valid); the variant's options are checked as the variant parses them
// (Variant.CheckOptions). The error names the first bad field by its JSON
// name. A caller that uses the configuration normalizes it first.
func (c Config) Validate() error {
	c.Normalize()
	bad := func(field, format string, a ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrConfig, field, fmt.Sprintf(format, a...))
	}
	if c.Dataset == "" {
		return bad("dataset", "missing (name of a dataset in the data directory)")
	}
	v, ok := LookupVariant(c.System)
	if !ok {
		return bad("system", "unknown system %q (have %s)", c.System, strings.Join(Names(), ", "))
	}
	if err := v.checkOptions(c); err != nil {
		return err
	}
	switch c.Model {
	case "sage", "gcn", "gat":
	default:
		return bad("model", "%q, want sage, gcn or gat", c.Model)
	}
	if len(c.Fanout) == 0 {
		return bad("fanout", "empty (one count per layer, -1 = all)")
	}
	for i, f := range c.Fanout {
		if f == 0 || f < -1 {
			return bad("fanout", "entry %d is %d, want a positive count or -1", i, f)
		}
	}
	if c.Layers != len(c.Fanout) {
		return bad("layers", "%d layers but %d fanouts", c.Layers, len(c.Fanout))
	}
	if c.Hidden <= 0 {
		return bad("hidden", "%d, want > 0", c.Hidden)
	}
	if c.Model == "gat" {
		if c.Heads <= 0 {
			return bad("heads", "%d, want > 0", c.Heads)
		}
		if c.Hidden%c.Heads != 0 {
			return bad("heads", "%d heads do not divide hidden %d (hidden is the concatenated width)", c.Heads, c.Hidden)
		}
	}
	if c.Dropout < 0 || c.Dropout >= 1 {
		return bad("dropout", "%v, want 0 <= p < 1", c.Dropout)
	}
	if c.Batch < 0 {
		return bad("batch", "%d, want >= 0 (0 = whole training split)", c.Batch)
	}
	if c.Epochs < 0 || c.Epochs == 0 && !c.PaperTestbed() {
		return bad("epochs", "%d, want > 0 (0 only with a paper's testbed: the mapping's epochs)", c.Epochs)
	}
	if !(c.LR > 0) {
		return bad("lr", "%v, want > 0", c.LR)
	}
	if c.WeightDecay < 0 {
		return bad("weight_decay", "%v, want >= 0", c.WeightDecay)
	}
	switch c.Eval {
	case EvalSampled, EvalFull:
	default:
		return bad("eval", "%q, want sampled or full", c.Eval)
	}
	if c.EvalFanout != nil {
		if len(c.EvalFanout) != len(c.Fanout) {
			return bad("eval_fanout", "%d entries for %d layers", len(c.EvalFanout), len(c.Fanout))
		}
		for i, f := range c.EvalFanout {
			if f == 0 || f < -1 {
				return bad("eval_fanout", "entry %d is %d, want a positive count or -1", i, f)
			}
		}
	}
	if c.EvalBatch < 0 {
		return bad("eval_batch", "%d, want >= 0", c.EvalBatch)
	}
	if c.EvalEvery < 0 {
		return bad("eval_every", "%d, want >= 0", c.EvalEvery)
	}
	if c.IDs != "" && c.IDs != IDsScattered && c.IDs != IDsLocal {
		return bad("ids", "%q, want %q, %q or none", c.IDs, IDsScattered, IDsLocal)
	}
	if c.TrainMaxNodes < 0 {
		return bad("train_max_nodes", "%d, want 0 (the whole training split) or a positive count", c.TrainMaxNodes)
	}
	if c.EvalMaxNodes < -1 {
		return bad("eval_max_nodes", "%d, want -1 (no cap), 0 (default %d) or a positive count", c.EvalMaxNodes, DefaultEvalMaxNodes)
	}
	if c.WarmupEpochs != nil && (*c.WarmupEpochs < 0 || *c.WarmupEpochs >= c.Epochs && c.Epochs > 1) {
		return bad("warmup_epochs", "%d, want 0 <= n < epochs (%d)", *c.WarmupEpochs, c.Epochs)
	}
	if _, err := ParseBackend(c.IO); err != nil {
		return bad("io", "%v", err)
	}
	if c.QueueDepth < 0 || c.QueueDepth > 4096 {
		return bad("queue_depth", "%d, want 0..4096", c.QueueDepth)
	}
	if c.MemLimitBytes < 0 || c.MemLimitBytes > units.MaxMemLimitBytes {
		return bad("mem_limit_bytes", "%d, want 0 (no limit) up to %s", c.MemLimitBytes, units.MaxMemLimitText)
	}
	switch c.Device {
	case "", DeviceCPU, DeviceCUDA, DeviceAuto:
	default:
		return bad("device", "%q, want %q, %q or %q", c.Device, DeviceCPU, DeviceCUDA, DeviceAuto)
	}
	switch c.ModelMem {
	case "", ModelMemDevice, ModelMemHost:
	default:
		return bad("model_mem", "%q, want %q or %q", c.ModelMem, ModelMemDevice, ModelMemHost)
	}
	if c.MemLimit != "" {
		if err := units.CheckMemLimit(c.MemLimit); err != nil {
			return bad("mem_limit", "%v", err)
		}
	}
	if _, _, err := c.ComputeMode(); err != nil {
		return bad("compute", "%v", err)
	}
	if err := checkTestbed(c.Testbed); err != nil {
		return bad("testbed", "%v", err)
	}
	if c.StepDilation < 0 || c.StepDilation > 1e6 || c.StepDilation != c.StepDilation {
		return bad("step_dilation", "%v, want 0 (not dilated) or a factor > 0 up to 1e6", c.StepDilation)
	}
	return c.validateDeviceMem()
}

// EvalFanouts returns the fanouts evaluation samples with.
func (c *Config) EvalFanouts() []int {
	if c.Eval == EvalFull {
		f := make([]int, len(c.Fanout))
		for i := range f {
			f[i] = -1
		}
		return f
	}
	if c.EvalFanout != nil {
		return c.EvalFanout
	}
	return c.Fanout
}

// ResolveMemLimit sets MemLimitBytes from MemLimit given the dataset's
// feature bytes (for percentages). An explicit MemLimitBytes wins when
// MemLimit is empty.
func (c *Config) ResolveMemLimit(featureBytes int64) error {
	if c.MemLimit == "" {
		return nil
	}
	b, err := units.ParseMemLimit(c.MemLimit, featureBytes)
	if err != nil {
		return fmt.Errorf("%w: mem_limit: %v", ErrConfig, err)
	}
	c.MemLimitBytes = b
	return nil
}

// ParseIntList parses "10,10,10" (entries may be -1).
func ParseIntList(s string) ([]int, error) {
	var out []int
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		v, err := strconv.Atoi(p)
		if err != nil {
			return nil, fmt.Errorf("bad list entry %q in %q", p, s)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("empty list %q", s)
	}
	return out, nil
}

// Opts reads variant-specific options (Config.Options) with typed getters
// whose errors name the option.
type Opts map[string]string

// Int returns option name as an int, def when absent.
func (o Opts) Int(name string, def int) (int, error) {
	s, ok := o[name]
	if !ok {
		return def, nil
	}
	v, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return def, fmt.Errorf("%w: options.%s: %q is not an integer", ErrConfig, name, s)
	}
	return v, nil
}

// Float returns option name as a float64, def when absent.
func (o Opts) Float(name string, def float64) (float64, error) {
	s, ok := o[name]
	if !ok {
		return def, nil
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return def, fmt.Errorf("%w: options.%s: %q is not a number", ErrConfig, name, s)
	}
	return v, nil
}

// Bool returns option name as a bool, def when absent.
func (o Opts) Bool(name string, def bool) (bool, error) {
	s, ok := o[name]
	if !ok {
		return def, nil
	}
	v, err := strconv.ParseBool(strings.TrimSpace(s))
	if err != nil {
		return def, fmt.Errorf("%w: options.%s: %q is not true/false", ErrConfig, name, s)
	}
	return v, nil
}

// Bytes returns option name as a byte count ("64MiB", "10%" of base), def
// when absent.
func (o Opts) Bytes(name string, base, def int64) (int64, error) {
	s, ok := o[name]
	if !ok {
		return def, nil
	}
	v, err := units.ParseMemLimit(s, base)
	if err != nil {
		return def, fmt.Errorf("%w: options.%s: %v", ErrConfig, name, err)
	}
	return v, nil
}

// String returns option name, def when absent.
func (o Opts) String(name, def string) string {
	if s, ok := o[name]; ok {
		return s
	}
	return def
}
