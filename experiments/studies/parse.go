package studies

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"outcore/experiments/grid"
)

// file is a study file as written:
//
//	{"grid": {...a grid file...}, "paper": {...optional...}}
type file struct {
	Grid  json.RawMessage `json:"grid"`
	Paper *paperFile      `json:"paper"`
}

// paperFile is the paper block as written.
type paperFile struct {
	Name         string                 `json:"name"`
	Figure       string                 `json:"figure"`
	Title        string                 `json:"title"`
	PaperSetting string                 `json:"paper_setting"`
	OurSetting   string                 `json:"our_setting"`
	Metric       string                 `json:"metric"`
	Labels       map[string]string      `json:"labels"`
	Points       []PaperPoint           `json:"points"`
	Ratios       []PaperRatio           `json:"ratios"`
	RatioMetrics map[string]RatioMetric `json:"ratio_metrics"`
	Differ       []string               `json:"differ"`
}

// Parse reads the study file name ("gnndrive-table2.json") whose bytes
// are b; its grid must parse as a grid file (grid.ParseGrid: the values
// are checked against datasets and variants where an experiment is
// created). A "$key" in the paper's differ list is the common reason key of
// reasons (reasons.json). Errors name the file and the field.
func Parse(name string, b []byte, reasons map[string]string) (Study, error) {
	fail := func(field, format string, args ...any) (Study, error) {
		return Study{}, fmt.Errorf("study file %s: %s: %s", name, field, fmt.Sprintf(format, args...))
	}
	id, ok := strings.CutSuffix(name, ".json")
	if !ok || !idOk(id) {
		return fail("name", "want ID.json, an ID without a colon or a slash")
	}
	var f file
	if err := decodeStrict(b, &f); err != nil {
		return Study{}, fmt.Errorf("study file %s: %w", name, err)
	}
	if len(f.Grid) == 0 || bytes.Equal(bytes.TrimSpace(f.Grid), []byte("null")) {
		return fail("grid", "missing")
	}
	g, err := grid.ParseGrid(f.Grid)
	if err != nil {
		return Study{}, fmt.Errorf("study file %s: grid: %w", name, err)
	}
	s := Study{ID: id, raw: f.Grid, Dataset: g.Dataset, Systems: g.Axes.System, MemLimits: g.Axes.MemLimit}
	if f.Paper == nil {
		if g.Name == "" {
			return fail("grid.name", "an example without a paper block needs a name")
		}
		return s, nil
	}
	if g.Name != "" {
		return fail("grid.name", "a study with a paper block is named from it (ID: paper figure); leave the grid unnamed")
	}
	p := f.Paper
	switch {
	case p.Name == "":
		return fail("paper.name", "missing")
	case p.Figure == "":
		return fail("paper.figure", "missing")
	case p.Title == "":
		return fail("paper.title", "missing")
	case p.Metric == "":
		return fail("paper.metric", "missing")
	case len(p.Differ) == 0:
		return fail("paper.differ", "say why our numbers differ from the paper's")
	case len(s.Systems) == 0:
		return fail("grid.axes.system", "a reproduction study lists its systems")
	case len(s.MemLimits) == 0:
		return fail("grid.axes.mem_limit", "a reproduction study lists its memory limits")
	}
	for i, lim := range s.MemLimits {
		if shareOf(lim) <= 0 {
			return fail(fmt.Sprintf("grid.axes.mem_limit[%d]", i), "%q is not a share of the feature bytes (\"60%%\")", lim)
		}
	}
	for entry := range p.Labels {
		if !slices.Contains(s.Systems, entry) {
			return fail("paper.labels", "%q is none of the grid's systems", entry)
		}
	}
	for i, pt := range p.Points {
		field := fmt.Sprintf("paper.points[%d]", i)
		if !slices.Contains(s.Systems, pt.System) {
			return fail(field+".system", "%q is none of the grid's systems", pt.System)
		}
		if !slices.Contains(s.MemLimits, pt.MemLimit) {
			return fail(field+".mem_limit", "%q is none of the grid's limits", pt.MemLimit)
		}
		if pt.Value <= 0 {
			return fail(field+".value", "want a positive number of seconds")
		}
	}
	labels := map[string]bool{}
	for i, r := range p.Ratios {
		field := fmt.Sprintf("paper.ratios[%d]", i)
		switch {
		case r.Label == "" || labels[r.Label]:
			return fail(field+".label", "empty or repeated (%q)", r.Label)
		case !slices.Contains(s.Systems, r.Num):
			return fail(field+".num", "%q is none of the grid's systems", r.Num)
		case !slices.Contains(s.Systems, r.Den):
			return fail(field+".den", "%q is none of the grid's systems", r.Den)
		case !slices.Contains(s.MemLimits, r.MemLimit):
			return fail(field+".mem_limit", "%q is none of the grid's limits", r.MemLimit)
		case r.Paper == "":
			return fail(field+".paper", "missing: the ratio as the paper states it")
		case r.Low <= 0 || r.High < r.Low:
			return fail(field+".low", "want 0 < low ≤ high (low %v, high %v)", r.Low, r.High)
		}
		labels[r.Label] = true
	}
	for label := range p.RatioMetrics {
		if !labels[label] {
			return fail("paper.ratio_metrics", "%q is none of the study's ratios", label)
		}
	}
	differ := make([]string, len(p.Differ))
	for i, d := range p.Differ {
		if key, ok := strings.CutPrefix(d, "$"); ok {
			r, found := reasons[key]
			if !found {
				return fail(fmt.Sprintf("paper.differ[%d]", i), "no common reason %q in reasons.json", key)
			}
			d = r
		}
		if strings.TrimSpace(d) == "" {
			return fail(fmt.Sprintf("paper.differ[%d]", i), "empty")
		}
		differ[i] = d
	}
	s.Paper = Paper{Name: p.Name, Figure: p.Figure, Title: p.Title, PaperSetting: p.PaperSetting, OurSetting: p.OurSetting,
		Metric: p.Metric, Labels: p.Labels, Points: p.Points, Ratios: p.Ratios, RatioMetrics: p.RatioMetrics, Differ: differ}
	if _, err := s.Testbed(); err != nil {
		return fail("paper.name", "%v: a study runs under its paper's testbed (DESIGN §13); name one with the grid's \"testbed\"", err)
	}
	return s, nil
}

// ParseReasons reads reasons.json: the common reasons why our numbers
// differ, by key ({"cpu": "training runs on a CPU ..."}).
func ParseReasons(b []byte) (map[string]string, error) {
	var r map[string]string
	if err := decodeStrict(b, &r); err != nil {
		return nil, fmt.Errorf("reasons.json: %w", err)
	}
	for k, v := range r {
		if k == "" || strings.TrimSpace(v) == "" {
			return nil, fmt.Errorf("reasons.json: %q: empty key or reason", k)
		}
	}
	return r, nil
}

// decodeStrict decodes one JSON value into v, refusing unknown fields and
// anything after the value.
func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fieldError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("more after the JSON value")
	}
	return nil
}

// fieldError words a decoding error by the field it is in.
func fieldError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Errorf("%s: want %s, not a JSON %s", te.Field, te.Type, te.Value)
	}
	return err
}
