// Package testbed holds the papers' hosts as profile files (one per
// paper: its GPU, host memory, CPU, SSD and dataset, every figure with
// the section of the paper or the spec sheet it comes from) and the one
// mapping from a testbed, a dataset and a batch shape to the settings of a
// run here (docs/DESIGN.md §13). It is a leaf: the standard library only.
package testbed

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"sort"
	"strings"
	"unicode/utf8"
)

// Format is the version of the profile file format this build reads.
const Format = 1

// Profile kinds.
const (
	// KindPaper is a paper's published host.
	KindPaper = "paper"
	// KindThisHost is this host as it is: no emulation (the default).
	KindThisHost = "this-host"
)

// ThisHost is the name of the default testbed: today's behaviour.
const ThisHost = "this-host"

// Figure is one published number with where it comes from. A figure the
// paper and the spec sheets do not publish is null, with the reason in
// Missing: never a guess.
type Figure struct {
	Value *float64 `json:"value"`
	// Source names the paper's section or the vendor's document, and how
	// the value was read from it (units, arithmetic).
	Source string `json:"source,omitempty"`
	// URL of the spec sheet or the page the figure was read on.
	URL string `json:"url,omitempty"`
	// Missing says why Value is null.
	Missing string `json:"missing,omitempty"`
}

// Known reports whether the figure has a value.
func (f Figure) Known() bool { return f.Value != nil }

// V is the value, 0 when unknown.
func (f Figure) V() float64 {
	if f.Value == nil {
		return 0
	}
	return *f.Value
}

// Text is a published name (a GPU or SSD model, a dataset) with its
// source.
type Text struct {
	Value  string `json:"value"`
	Source string `json:"source"`
	URL    string `json:"url,omitempty"`
}

// Ints is a published list of integers (a fanout) with its source, or
// null with the reason.
type Ints struct {
	Value   []int  `json:"value"`
	Source  string `json:"source,omitempty"`
	Missing string `json:"missing,omitempty"`
}

// GPU is the paper's accelerator.
type GPU struct {
	Model Text `json:"model"`
	// MemoryBytes is the device memory.
	MemoryBytes Figure `json:"memory_bytes"`
	// MemoryBytesPerS is the device memory bandwidth (spec sheet).
	MemoryBytesPerS Figure `json:"memory_bytes_per_s"`
	// FP32FLOPs is the FP32 (non-tensor) peak (spec sheet).
	FP32FLOPs Figure `json:"fp32_flops"`
	// PCIeGen is the PCIe generation of the GPU's link to the host.
	PCIeGen Figure `json:"pcie_gen"`
	// AccelProfile names the engine/accel profile of this GPU: measured
	// where one exists, else derived (DESIGN §13).
	AccelProfile string `json:"accel_profile"`
}

// Host is the paper's CPU side.
type Host struct {
	CPU Text `json:"cpu"`
	// Cores and Threads are the host's physical cores and hardware
	// threads, all sockets.
	Cores   Figure `json:"cores"`
	Threads Figure `json:"threads"`
	// MemoryBytes is the installed memory.
	MemoryBytes Figure `json:"memory_bytes"`
	// MemoryLimitBytes is the host memory the paper's default runs were
	// given (a limit it set, or the installed memory when it set none).
	MemoryLimitBytes Figure `json:"memory_limit_bytes"`
}

// SSD is the paper's default storage.
type SSD struct {
	Model Text `json:"model"`
	// Count is the number of devices the default runs read from.
	Count Figure `json:"count"`
	// RandReadIOPS is one device's published random-read IOPS (4 KiB,
	// the queue depth of the spec sheet).
	RandReadIOPS Figure `json:"rand_read_iops"`
	// SeqReadBytesPerS is one device's published sequential read bandwidth.
	SeqReadBytesPerS Figure `json:"seq_read_bytes_per_s"`
}

// Dataset is the paper's default dataset.
type Dataset struct {
	Name         Text   `json:"name"`
	Nodes        Figure `json:"nodes"`
	FeatureDim   Figure `json:"feature_dim"`
	FeatureBytes Figure `json:"feature_bytes"`
}

// Run is the paper's default run: its batch shape, the device memory its
// systems were given, and its epochs.
type Run struct {
	Batch  Figure `json:"batch"`
	Fanout Ints   `json:"fanout"`
	// DeviceBudgetBytes is the device memory the paper gave its system
	// (a cache size it set), null when it used the whole GPU.
	DeviceBudgetBytes Figure `json:"device_budget_bytes"`
	// Epochs the paper ran per measurement.
	Epochs Figure `json:"epochs"`
}

// Profile is one testbed: profiles/<name>.json.
type Profile struct {
	Format int    `json:"format"`
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	// Paper is the paper as the study files name it ("GNNDrive (ICPP'24)").
	Paper string `json:"paper,omitempty"`
	// Setup names the paper's section that describes its testbed.
	Setup   string   `json:"setup,omitempty"`
	Note    string   `json:"note,omitempty"`
	GPU     *GPU     `json:"gpu,omitempty"`
	Host    *Host    `json:"host,omitempty"`
	SSD     *SSD     `json:"ssd,omitempty"`
	Dataset *Dataset `json:"dataset,omitempty"`
	Run     *Run     `json:"run,omitempty"`
}

// figures lists the profile's number figures by their JSON path.
func (p *Profile) figures() []struct {
	path string
	f    *Figure
} {
	type nf = struct {
		path string
		f    *Figure
	}
	return []nf{
		{"gpu.memory_bytes", &p.GPU.MemoryBytes},
		{"gpu.memory_bytes_per_s", &p.GPU.MemoryBytesPerS},
		{"gpu.fp32_flops", &p.GPU.FP32FLOPs},
		{"gpu.pcie_gen", &p.GPU.PCIeGen},
		{"host.cores", &p.Host.Cores},
		{"host.threads", &p.Host.Threads},
		{"host.memory_bytes", &p.Host.MemoryBytes},
		{"host.memory_limit_bytes", &p.Host.MemoryLimitBytes},
		{"ssd.count", &p.SSD.Count},
		{"ssd.rand_read_iops", &p.SSD.RandReadIOPS},
		{"ssd.seq_read_bytes_per_s", &p.SSD.SeqReadBytesPerS},
		{"dataset.nodes", &p.Dataset.Nodes},
		{"dataset.feature_dim", &p.Dataset.FeatureDim},
		{"dataset.feature_bytes", &p.Dataset.FeatureBytes},
		{"run.batch", &p.Run.Batch},
		{"run.device_budget_bytes", &p.Run.DeviceBudgetBytes},
		{"run.epochs", &p.Run.Epochs},
	}
}

// required are the figures a mapping cannot do without: a paper profile
// without them is refused.
var required = map[string]bool{
	"gpu.memory_bytes": true, "host.memory_limit_bytes": true,
	"dataset.nodes": true, "dataset.feature_dim": true, "dataset.feature_bytes": true,
	"run.batch": true,
}

// Parse reads and checks a profile file: unknown fields, a figure without
// its source, a null figure without the reason, a value that is not a
// finite positive number, and the sections a kind must (not) have are
// errors naming the field.
func Parse(b []byte) (*Profile, error) {
	var p Profile
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("testbed profile: %w", err)
	}
	if dec.More() {
		return nil, errors.New("testbed profile: data after the JSON object")
	}
	if err := p.check(); err != nil {
		return nil, fmt.Errorf("testbed profile %q: %w", p.Name, err)
	}
	return &p, nil
}

func (p *Profile) check() error {
	if p.Format != Format {
		return fmt.Errorf("format: %d, this build reads format %d", p.Format, Format)
	}
	if err := checkName(p.Name); err != nil {
		return err
	}
	sections := p.GPU != nil || p.Host != nil || p.SSD != nil || p.Dataset != nil || p.Run != nil
	switch p.Kind {
	case KindThisHost:
		if sections || p.Paper != "" {
			return errors.New("kind this-host: no paper, gpu, host, ssd, dataset or run (it emulates nothing)")
		}
		if len(strings.TrimSpace(p.Note)) < 20 {
			return errors.New("note: missing (say what this-host means)")
		}
		return nil
	case KindPaper:
	default:
		return fmt.Errorf("kind: %q, want %q or %q", p.Kind, KindPaper, KindThisHost)
	}
	if strings.TrimSpace(p.Paper) == "" {
		return errors.New("paper: missing")
	}
	if strings.TrimSpace(p.Setup) == "" {
		return errors.New("setup: missing (the paper's section describing its testbed)")
	}
	for name, missing := range map[string]bool{"gpu": p.GPU == nil, "host": p.Host == nil, "ssd": p.SSD == nil, "dataset": p.Dataset == nil, "run": p.Run == nil} {
		if missing {
			return fmt.Errorf("%s: missing", name)
		}
	}
	texts := []struct {
		path string
		t    Text
	}{{"gpu.model", p.GPU.Model}, {"host.cpu", p.Host.CPU}, {"ssd.model", p.SSD.Model}, {"dataset.name", p.Dataset.Name}}
	for _, t := range texts {
		if strings.TrimSpace(t.t.Value) == "" {
			return fmt.Errorf("%s: no value", t.path)
		}
		if !hasSource(t.t.Source) {
			return fmt.Errorf("%s: no source", t.path)
		}
	}
	if err := checkName(p.GPU.AccelProfile); err != nil {
		return fmt.Errorf("gpu.accel_profile: %w", err)
	}
	switch fo := p.Run.Fanout; {
	case len(fo.Value) == 0 && len(strings.TrimSpace(fo.Missing)) < 10:
		return errors.New("run.fanout: null without the reason (missing)")
	case len(fo.Value) > 0 && (!hasSource(fo.Source) || fo.Missing != ""):
		return errors.New("run.fanout: want its source and no reason it is missing")
	}
	for _, f := range p.Run.Fanout.Value {
		if f < 1 || f > 1000 {
			return fmt.Errorf("run.fanout: %d, want 1 to 1000", f)
		}
	}
	for _, nf := range p.figures() {
		if err := nf.f.check(); err != nil {
			return fmt.Errorf("%s: %w", nf.path, err)
		}
		if required[nf.path] && !nf.f.Known() {
			return fmt.Errorf("%s: null, but the mapping needs it", nf.path)
		}
	}
	if g := p.GPU.PCIeGen; g.Known() && (g.V() < 1 || g.V() > 7 || g.V() != math.Trunc(g.V())) {
		return fmt.Errorf("gpu.pcie_gen: %v, want a generation 1 to 7", g.V())
	}
	return nil
}

func (f *Figure) check() error {
	if f.Value == nil {
		if len(strings.TrimSpace(f.Missing)) < 10 {
			return errors.New("null without the reason (missing)")
		}
		return nil
	}
	if f.Missing != "" {
		return errors.New("has a value and a reason it is missing")
	}
	if v := *f.Value; !(v > 0) || math.IsInf(v, 0) {
		return fmt.Errorf("value %v, want a finite number > 0", v)
	}
	if !hasSource(f.Source) {
		return errors.New("no source")
	}
	return nil
}

// hasSource: a source names at least a section ("§5") or a table.
func hasSource(s string) bool { return utf8.RuneCountInString(strings.TrimSpace(s)) >= 2 }

func checkName(name string) error {
	if name == "" || len(name) > 64 {
		return fmt.Errorf("name %q: want 1 to 64 characters", name)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.') {
			return fmt.Errorf("name %q: only lower-case letters, digits, '-' and '.'", name)
		}
	}
	return nil
}

//go:embed profiles/*.json
var files embed.FS

// Names lists the testbeds this build carries, sorted.
func Names() []string {
	ents, _ := fs.ReadDir(files, "profiles")
	var out []string
	for _, e := range ents {
		if n, ok := strings.CutSuffix(e.Name(), ".json"); ok {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// Load returns the testbed of that name (profiles/<name>.json, embedded).
// Errors name the file and the field.
func Load(name string) (*Profile, error) {
	if err := checkName(name); err != nil {
		return nil, fmt.Errorf("testbed: %w", err)
	}
	return loadFrom(files, name)
}

// loadFrom loads profiles/<name>.json of fsys.
func loadFrom(fsys fs.FS, name string) (*Profile, error) {
	file := "profiles/" + name + ".json"
	b, err := fs.ReadFile(fsys, file)
	if err != nil {
		return nil, fmt.Errorf("no testbed %q (have %s)", name, strings.Join(Names(), ", "))
	}
	p, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("engine/testbed/%s: %w", file, err)
	}
	if p.Name != name {
		return nil, fmt.Errorf("engine/testbed/%s names itself %q", file, p.Name)
	}
	return p, nil
}

// ForPaper returns the testbed whose paper the study names ("GNNDrive
// (ICPP'24)"; matched on the system's name before the parenthesis or
// colon, case-insensitively), or an error.
func ForPaper(paper string) (*Profile, error) {
	key := strings.ToLower(strings.TrimSpace(paper))
	if i := strings.IndexAny(key, " (:"); i > 0 {
		key = key[:i]
	}
	for _, n := range Names() {
		p, err := Load(n)
		if err != nil {
			return nil, err
		}
		if p.Kind != KindPaper {
			continue
		}
		own := strings.ToLower(p.Paper)
		if i := strings.IndexAny(own, " (:"); i > 0 {
			own = own[:i]
		}
		if own == key {
			return p, nil
		}
	}
	return nil, fmt.Errorf("no testbed for paper %q (have %s)", paper, strings.Join(Names(), ", "))
}
