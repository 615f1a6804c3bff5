package studies

import (
	"embed"
	"io/fs"
	"sort"
	"strings"
)

//go:embed files/*.json reasons.json
var embedded embed.FS

// registry is the embedded study files, parsed once; loadErr is the
// first file that did not parse (Check), left out of the registry.
var registry, loadErr = load(embedded)

// load parses every files/*.json of fsys, by file name.
func load(fsys fs.FS) ([]Study, error) {
	rb, err := fs.ReadFile(fsys, "reasons.json")
	if err != nil {
		return nil, err
	}
	reasons, err := ParseReasons(rb)
	if err != nil {
		return nil, err
	}
	des, err := fs.ReadDir(fsys, "files")
	if err != nil {
		return nil, err
	}
	var out []Study
	var first error
	for _, de := range des {
		b, err := fs.ReadFile(fsys, "files/"+de.Name())
		if err == nil {
			var s Study
			if s, err = Parse(de.Name(), b, reasons); err == nil {
				out = append(out, s)
				continue
			}
		}
		if first == nil {
			first = err
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, first
}

// Check reports the first embedded study file that does not parse (the
// registry leaves it out); nil when every one does.
func Check() error { return loadErr }

// All returns every study, by ID.
func All() []Study { return append([]Study(nil), registry...) }

// Papers returns the reproduction studies (those with a paper block), by
// ID: the Reproduce page's list.
func Papers() []Study {
	var out []Study
	for _, s := range registry {
		if s.IsPaper() {
			out = append(out, s)
		}
	}
	return out
}

// Examples returns the studies without a paper block, by ID: the
// ready-to-start grids `outcore serve` writes into the data directory.
func Examples() []Study {
	var out []Study
	for _, s := range registry {
		if !s.IsPaper() {
			out = append(out, s)
		}
	}
	return out
}

// Lookup finds a study, paper or example, by ID.
func Lookup(id string) (Study, bool) {
	for _, s := range registry {
		if s.ID == id {
			return s, true
		}
	}
	return Study{}, false
}

// ByExperiment returns the reproduction study an experiment was created
// for, by the ID its name starts with.
func ByExperiment(name string) (Study, bool) {
	id, _, ok := strings.Cut(name, ":")
	if !ok {
		return Study{}, false
	}
	s, ok := Lookup(id)
	return s, ok && s.IsPaper()
}

// IDs lists every study's ID, comma-separated (for usage messages).
func IDs() string {
	ids := make([]string, len(registry))
	for i, s := range registry {
		ids[i] = s.ID
	}
	return strings.Join(ids, ", ")
}
