package web

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"outcore/engine/dataset"
	"outcore/internal/units"
	"outcore/store"
	"outcore/web/views"
)

// DatasetsHandler serves the datasets page: the datasets of the data
// directory, and generate and import jobs.
type DatasetsHandler struct {
	DataDir    string
	ImportRoot string // imports read only from inside this folder
	Jobs       *Jobs
	Store      Store // which datasets queued or running runs use
}

// importKinds are the importers the page offers.
var importKinds = []struct{ Value, Label, Note string }{
	{"linqs", "LINQS (*.content, *.cites)", "e.g. Cora: a folder with cora.content and cora.cites (and a derived/ split)"},
	{"ogb", "OGB raw files", "raw/edge.csv.gz, raw/node-feat.csv.gz, raw/node-label.csv.gz, split/<name>/{train,valid,test}.csv.gz"},
	{"npy", "NumPy .npy files", "features.npy, and optionally labels.npy, edges.npy (or indptr.npy + indices.npy), train.npy, val.npy, test.npy"},
}

// datasetRows lists the data directory's datasets.
func datasetRows(dataDir string) ([]views.DatasetRow, error) {
	entries, err := dataset.ListEntries(dataDir)
	if err != nil {
		return nil, err
	}
	rows := make([]views.DatasetRow, 0, len(entries))
	for _, e := range entries {
		if e.Err != nil {
			rows = append(rows, views.DatasetRow{Name: e.Name, Problem: e.Err.Error()})
			continue
		}
		m := e.Meta
		src := m.Source.Kind
		if m.Source.Preset != "" {
			src += " (preset " + m.Source.Preset + ")"
		}
		rows = append(rows, views.DatasetRow{
			Name: e.Name, Nodes: fmtInt(m.Nodes), Edges: fmtInt(m.Edges),
			Dim: strconv.Itoa(m.FeatureDim), Classes: strconv.Itoa(m.Classes), Features: units.Bytes(m.FeatureBytes()),
			Split: fmtInt(m.Train) + " / " + fmtInt(m.Val) + " / " + fmtInt(m.Test), Source: src, Created: fmtTime(m.Created),
		})
	}
	return rows, nil
}

// jobViews converts job snapshots.
func jobViews(js []JobState) []views.Job {
	out := make([]views.Job, len(js))
	for i, j := range js {
		out[i] = views.Job{ID: j.ID, Kind: j.Kind, Name: j.Name, State: j.State, Percent: j.Percent,
			Message: j.Message, Link: j.Link, Started: fmtTime(j.Started), Finished: j.Finished}
	}
	return out
}

// forms fills the generate and import forms.
func (h *DatasetsHandler) forms(genPreset, genName, genSeed, impKind, impPath, impName string, errs map[string]string) views.DatasetForms {
	f := views.DatasetForms{GenName: genName, GenPreset: genPreset, GenSeed: genSeed, ImpKind: impKind, ImpPath: impPath, ImpName: impName,
		ImportRoot: h.ImportRoot, Errors: errs}
	for _, p := range dataset.PresetNames() {
		f.Presets = append(f.Presets, views.FormOption{Value: p, Label: presetLabel(p), Note: dataset.PresetDoc(p), Selected: p == genPreset})
	}
	for _, k := range importKinds {
		f.ImportKinds = append(f.ImportKinds, views.FormOption{Value: k.Value, Label: k.Label, Note: k.Note, Selected: k.Value == impKind})
	}
	return f
}

func (h *DatasetsHandler) page(c *fiber.Ctx, f views.DatasetForms) error {
	rows, err := datasetRows(h.DataDir)
	if err != nil {
		return err
	}
	v := views.DatasetsView{Datasets: rows, Jobs: jobViews(h.Jobs.List()), Forms: f, DataDir: dataset.DatasetsDir(h.DataDir)}
	return renderPage(c, views.DatasetsPage(pageMeta(c, "Datasets", "datasets"), v))
}

// List handles GET /datasets.
func (h *DatasetsHandler) List(c *fiber.Ctx) error {
	return h.page(c, h.forms("tiny", "", "1", "linqs", "", "", nil))
}

// JobsFragment handles GET /datasets/jobs: the job list, polled while a
// job runs, with the dataset table out of band (a dataset a job made or
// removed shows without a reload).
func (h *DatasetsHandler) JobsFragment(c *fiber.Ctx) error {
	rows, err := datasetRows(h.DataDir)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	return views.JobsPoll(jobViews(h.Jobs.List()), rows, Token(c)).Render(c.UserContext(), c.Response().BodyWriter())
}

// datasetName reads the :name route parameter: an existing dataset.
func (h *DatasetsHandler) datasetName(c *fiber.Ctx) (string, error) {
	name := strings.Clone(c.Params("name"))
	if err := dataset.ValidateName(name); err != nil {
		return "", fiber.NewError(fiber.StatusBadRequest, "dataset: "+err.Error())
	}
	if _, err := os.Stat(filepath.Join(dataset.DatasetsDir(h.DataDir), name)); err != nil {
		return "", fiber.NewError(fiber.StatusNotFound, fmt.Sprintf("dataset %q: not in %s", name, dataset.DatasetsDir(h.DataDir)))
	}
	return name, nil
}

// Verify handles POST /datasets/:name/verify: a job checks the dataset's
// files (dataset.Verify, the features scanned for NaN and ±Inf) and shows
// what it found.
func (h *DatasetsHandler) Verify(c *fiber.Ctx) error {
	name, err := h.datasetName(c)
	if err != nil {
		return err
	}
	if _, err := h.Jobs.Verify(name); err != nil {
		return jobsFull(c, err)
	}
	return redirect(c, "/datasets")
}

// Delete handles POST /datasets/:name/delete: the dataset's folder goes,
// unless a queued or running run or a job uses it (409, naming them).
func (h *DatasetsHandler) Delete(c *fiber.Ctx) error {
	name, err := h.datasetName(c)
	if err != nil {
		return err
	}
	if h.Jobs.Busy(name) {
		return fiber.NewError(fiber.StatusConflict, fmt.Sprintf("dataset %q: a job is working on it; delete it when the job has ended", name))
	}
	if h.Store != nil {
		runs, err := h.Store.Runs(c.UserContext(), store.RunFilter{Statuses: []string{store.StatusQueued, store.StatusRunning}, Current: true})
		if err != nil {
			return err
		}
		var users []string
		for _, r := range runs {
			if r.Dataset == name || strings.HasPrefix(r.Dataset, name+"-d") {
				users = append(users, fmt.Sprintf("run %d (experiment %d, %s)", r.ID, r.ExperimentID, r.Status))
			}
		}
		if len(users) > 0 {
			if len(users) > 5 {
				users = append(users[:5], fmt.Sprintf("%d more", len(users)-5))
			}
			return fiber.NewError(fiber.StatusConflict, fmt.Sprintf("dataset %q is used by %s: cancel them first", name, strings.Join(users, ", ")))
		}
	}
	if err := os.RemoveAll(filepath.Join(dataset.DatasetsDir(h.DataDir), name)); err != nil {
		return fmt.Errorf("delete dataset %s: %w", name, err)
	}
	return redirect(c, "/datasets")
}

// checkNewName validates the name of a dataset about to be made.
func (h *DatasetsHandler) checkNewName(name string) string {
	if name == "" {
		return "name: give the dataset a name"
	}
	if err := dataset.ValidateName(name); err != nil {
		return "name: " + err.Error()
	}
	if _, err := os.Stat(filepath.Join(dataset.DatasetsDir(h.DataDir), name)); err == nil {
		return fmt.Sprintf("name: a dataset named %q exists already", name)
	}
	if h.Jobs.Busy(name) {
		return fmt.Sprintf("name: a job is already making %q", name)
	}
	return ""
}

// Generate handles POST /datasets/generate.
func (h *DatasetsHandler) Generate(c *fiber.Ctx) error {
	preset, name, seedS := c.FormValue("preset"), strings.TrimSpace(c.FormValue("name")), strings.TrimSpace(c.FormValue("seed"))
	errs := map[string]string{}
	cfg, err := dataset.Preset(preset)
	if err != nil {
		errs["preset"] = fmt.Sprintf("preset: unknown preset %q (have %s)", preset, strings.Join(dataset.PresetNames(), ", "))
	}
	if msg := h.checkNewName(name); msg != "" {
		errs["name"] = msg
	}
	if seedS != "" {
		seed, err := strconv.ParseUint(seedS, 10, 64)
		if err != nil {
			errs["seed"] = fmt.Sprintf("seed: %q is not a whole number ≥ 0", seedS)
		}
		cfg.Seed = seed
	}
	if len(errs) > 0 {
		c.Status(fiber.StatusUnprocessableEntity)
		return h.page(c, h.forms(preset, name, seedS, "linqs", "", "", errs))
	}
	if _, err := h.Jobs.Generate(name, preset, cfg, nil); err != nil {
		return jobsFull(c, err)
	}
	return redirect(c, "/datasets")
}

// ErrOutsideImportRoot is returned for an import path that leaves the import folder.
var ErrOutsideImportRoot = errors.New("import path outside the import folder")

// ResolveImportPath confines an import source to root: p is relative to
// root or absolute; it must not contain "..", and after following symbolic
// links it must still lie inside root and be a folder.
func ResolveImportPath(root, p string) (string, error) {
	p = strings.TrimSpace(p)
	if p == "" {
		return "", errors.New("give the source folder")
	}
	for _, part := range strings.Split(filepath.ToSlash(p), "/") {
		if part == ".." {
			return "", fmt.Errorf("%q: %w (no \"..\")", p, ErrOutsideImportRoot)
		}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", fmt.Errorf("import folder %s: %w", root, err)
	}
	real, err := filepath.EvalSymlinks(filepath.Clean(p))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("%s: no such folder", p)
		}
		return "", fmt.Errorf("%s: %w", p, err)
	}
	rel, err := filepath.Rel(realRoot, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s resolves to %s: %w %s", p, real, ErrOutsideImportRoot, root)
	}
	st, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("%s: %w", p, err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("%s is not a folder", p)
	}
	return real, nil
}

// CheckImportTree checks every entry under an import source folder (already
// confined to root by ResolveImportPath): a symbolic link must resolve
// inside root — a link to a folder is checked the same way, all the way
// down — and everything must be a folder or a regular file (a FIFO or a
// device would block or leak the job). The importers follow links, so a
// link out of the import folder would read any file the server can.
func CheckImportTree(root, src string) error {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return fmt.Errorf("import folder %s: %w", root, err)
	}
	inside := func(p string) bool {
		rel, err := filepath.Rel(realRoot, p)
		return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
	}
	seen := map[string]bool{}
	var walk func(dir, shown string) error
	walk = func(dir, shown string) error {
		if seen[dir] {
			return nil
		}
		seen[dir] = true
		return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return fmt.Errorf("import source: %w", err)
			}
			rel, _ := filepath.Rel(dir, p)
			name := filepath.Join(shown, rel)
			switch {
			case d.Type()&fs.ModeSymlink != 0:
				real, err := filepath.EvalSymlinks(p)
				if err != nil {
					return fmt.Errorf("import source: %s is a broken symbolic link: %w", name, err)
				}
				if !inside(real) {
					return fmt.Errorf("import source: %s is a symbolic link to %s: %w %s", name, real, ErrOutsideImportRoot, root)
				}
				st, err := os.Stat(real)
				if err != nil {
					return fmt.Errorf("import source: %s: %w", name, err)
				}
				if st.IsDir() {
					return walk(real, name)
				}
				if !st.Mode().IsRegular() {
					return fmt.Errorf("import source: %s links to %s, which is not a regular file", name, real)
				}
			case d.IsDir():
			case !d.Type().IsRegular():
				return fmt.Errorf("import source: %s is not a regular file (%v)", name, d.Type())
			}
			return nil
		})
	}
	realSrc, err := filepath.EvalSymlinks(src)
	if err != nil {
		return fmt.Errorf("import source %s: %w", src, err)
	}
	if !inside(realSrc) {
		return fmt.Errorf("%s: %w %s", src, ErrOutsideImportRoot, root)
	}
	return walk(realSrc, filepath.Base(src))
}

// npySources finds the .npy files of an npy import by their conventional names.
func npySources(dir string) (dataset.NPYSources, error) {
	find := func(names ...string) string {
		for _, n := range names {
			p := filepath.Join(dir, n)
			if st, err := os.Lstat(p); err == nil && st.Mode().IsRegular() {
				return p
			}
		}
		return ""
	}
	s := dataset.NPYSources{
		Features: find("features.npy", "node_feat.npy", "x.npy"),
		Labels:   find("labels.npy", "node_label.npy", "y.npy"),
		Edges:    find("edges.npy", "edge_index.npy"),
		Indptr:   find("indptr.npy"),
		Indices:  find("indices.npy"),
		Train:    find("train.npy", "train_idx.npy"),
		Val:      find("val.npy", "valid.npy", "valid_idx.npy"),
		Test:     find("test.npy", "test_idx.npy"),
	}
	if s.Features == "" {
		return s, fmt.Errorf("%s: no features.npy", dir)
	}
	return s, nil
}

// Import handles POST /datasets/import.
func (h *DatasetsHandler) Import(c *fiber.Ctx) error {
	kind, p, name := c.FormValue("kind"), c.FormValue("path"), strings.TrimSpace(c.FormValue("name"))
	errs := map[string]string{}
	known := false
	for _, k := range importKinds {
		known = known || k.Value == kind
	}
	if !known {
		errs["kind"] = fmt.Sprintf("format: unknown import format %q", kind)
	}
	src, err := ResolveImportPath(h.ImportRoot, p)
	if err == nil {
		err = CheckImportTree(h.ImportRoot, src)
	}
	if err != nil {
		errs["path"] = "source folder: " + err.Error()
	}
	if msg := h.checkNewName(name); msg != "" {
		errs["name"] = msg
	}
	if len(errs) > 0 {
		c.Status(fiber.StatusUnprocessableEntity)
		return h.page(c, h.forms("tiny", "", "1", kind, p, name, errs))
	}
	if _, err := h.Jobs.Import(kind, name, src); err != nil {
		return jobsFull(c, err)
	}
	return redirect(c, "/datasets")
}

// jobsFull answers a job the full queue refused (503, Retry-After).
func jobsFull(c *fiber.Ctx, err error) error {
	c.Set(fiber.HeaderRetryAfter, "30")
	return fiber.NewError(fiber.StatusServiceUnavailable, err.Error())
}
