package studies

import (
	"strings"
	"testing"
)

// TestParseBadFiles: a bad study file is refused with the file and the
// field in the message.
func TestParseBadFiles(t *testing.T) {
	reasons := map[string]string{"cpu": "training runs on a CPU"}
	const grid = `"grid": {"dataset": "medium", "axes": {"system": ["ginex", "pyg+"], "mem_limit": ["25%"]}}`
	paper := func(extra string) string {
		return `{` + grid + `, "paper": {"name": "Ginex", "figure": "Fig. 14", "title": "t", "metric": "epoch_s", "differ": ["$cpu"]` + extra + `}}`
	}
	for _, c := range []struct{ name, body, want string }{
		{"x.txt", `{}`, "x.txt: name"},
		{"a:b.json", `{}`, "a:b.json: name"},
		{"x.json", `not json`, "x.json: invalid character"},
		{"x.json", `{"grid": {"name": "n", "dataset": "default"}, "extra": 1}`, `x.json: json: unknown field "extra"`},
		{"x.json", `{"grid": {"name": "n", "dataset": "default"}} {}`, "x.json: more after the JSON value"},
		{"x.json", `{"paper": null}`, "x.json: grid: missing"},
		{"x.json", `{"grid": {"name": "n"}}`, "x.json: grid: invalid experiment: dataset: missing"},
		{"x.json", `{"grid": {"dataset": 3}}`, "x.json: grid: invalid experiment: dataset: want a dataset name"},
		{"x.json", `{"grid": {"name": "n", "dataset": "default", "axes": {"batch_size": "big"}}}`, "x.json: grid: invalid experiment: batch sizes: want a non-empty list"},
		{"x.json", `{"grid": {"dataset": "default"}}`, "x.json: grid.name: an example without a paper block needs a name"},
		{"x.json", `{"grid": {"name": "n", "dataset": "medium", "axes": {"system": ["ginex"], "mem_limit": ["25%"]}}, "paper": {}}`, "x.json: grid.name"},
		{"x.json", `{` + grid + `, "paper": {"figure": "f"}}`, "x.json: paper.name: missing"},
		{"x.json", `{` + grid + `, "paper": {"name": "n", "figure": "f", "title": "t", "metric": "epoch_s"}}`, "x.json: paper.differ"},
		{"x.json", paper(`, "points": [{"system": "helios", "mem_limit": "25%", "value": 1}]`), "x.json: paper.points[0].system"},
		{"x.json", paper(`, "points": [{"system": "ginex", "mem_limit": "30%", "value": 1}]`), "x.json: paper.points[0].mem_limit"},
		{"x.json", paper(`, "points": [{"system": "ginex", "mem_limit": "25%", "value": "fast"}]`), "x.json: paper.points.value: want float64"},
		{"x.json", paper(`, "ratios": [{"label": "l", "num": "pyg+", "den": "ginex", "mem_limit": "25%", "paper": "2×", "low": 3, "high": 2}]`), "x.json: paper.ratios[0].low"},
		{"x.json", paper(`, "ratios": [{"label": "l", "num": "pyg+", "den": "gids", "mem_limit": "25%", "paper": "2×", "low": 2, "high": 2}]`), "x.json: paper.ratios[0].den"},
		{"x.json", paper(`, "ratio_metrics": {"nope": {"num": "epoch_no_sample_s"}}`), "x.json: paper.ratio_metrics"},
		{"x.json", paper(`, "labels": {"helios": "Helios"}`), "x.json: paper.labels"},
		{"x.json", strings.Replace(paper(``), `"$cpu"`, `"$gpu"`, 1), `x.json: paper.differ[0]: no common reason "gpu"`},
		{"x.json", strings.Replace(paper(``), `"25%"`, `"1GiB"`, 1), "x.json: grid.axes.mem_limit[0]"},
	} {
		_, err := Parse(c.name, []byte(c.body), reasons)
		if err == nil || !strings.Contains(err.Error(), "study file "+c.want) {
			t.Errorf("%s %s: %v, want an error with %q", c.name, c.body, err, c.want)
		}
	}
	s, err := Parse("ok.json", []byte(paper(`, "labels": {"ginex": "Ginex"}`)), reasons)
	if err != nil || !s.IsPaper() || s.Differ[0] != "training runs on a CPU" || s.Label("ginex") != "Ginex" || s.Label("pyg+") != "pyg+" {
		t.Fatalf("a good file: %+v, %v", s, err)
	}
	if _, err := ParseReasons([]byte(`{"cpu": ""}`)); err == nil {
		t.Error("an empty common reason was accepted")
	}
}
