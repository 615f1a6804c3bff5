package grid

import (
	"strings"

	"outcore/engine/dataset"
	"outcore/engine/vocab"
)

// The ids axis (issue 37 item 5): the same graph with its nodes numbered
// two ways, so that a study shows what the id order decides — a cache
// of rows keyed by node sees the same graph either way, while
// MariusGNN's node blocks by id range, pages of adjacent rows and merged
// reads see
// communities only when their ids are close. A cell runs on the grid's
// dataset renumbered: GenConfig.WithIDs of its generator config, which
// makes the scattered and the community-local twin the same graph
// (DESIGN §4 "Structure").

// Node numberings, the values of the ids axis (vocab.Config.IDs, which
// each cell sets).
const (
	// IDsScattered: ids scattered over the communities by a keyed
	// permutation (how every preset but papers-struct numbers them).
	IDsScattered = vocab.IDsScattered
	// IDsLocal: ids numbered community by community, most popular first.
	IDsLocal = vocab.IDsLocal
)

// ConfigOnlyAxes are the named axes whose value a run keeps in its
// configuration only, with no column of its own (store.NamedAxes leaves
// them out): its cell on them (store.Run.Cell) is read from there, so
// charts and study tables tell the cells apart.
var ConfigOnlyAxes = []string{AxisIDs}

// IDsName is the name of the twin of base numbered ids: "medium-ids-local".
func IDsName(base, ids string) string { return base + "-ids-" + ids }

// IDsOfName reports whether name is a twin of base (IDsName) and which
// numbering it has.
func IDsOfName(base, name string) (string, bool) {
	ids, ok := strings.CutPrefix(name, base+"-ids-")
	return ids, ok && (ids == IDsScattered || ids == IDsLocal)
}

// IDsDataset is the dataset a cell numbered ids runs on, of the grid's
// dataset name with meta base: base itself when the structured generator
// already made it so numbered (papers-struct for local ids), else its
// twin IDsName(name, ids), which the runner generates from base's
// generator config when it is missing.
func IDsDataset(name string, base dataset.Meta, ids string) string {
	if g := base.Source.Generator; g != nil && g.Structured() && g.IDLocality == (ids == IDsLocal) {
		return name
	}
	return IDsName(name, ids)
}
