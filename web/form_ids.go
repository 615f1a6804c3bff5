package web

// The new-experiment form's node-numbering field (DESIGN §4,
// "Structure"; the grid's "ids" axis): checkboxes for scattered and
// community-local ids. None ticked leaves the dataset as it is; each
// ticked numbering runs on the dataset's twin numbered that way, its own
// runs, so a study of a cache or of read merging sees both structures.

import (
	"fmt"
	"slices"

	"outcore/engine/vocab"
	"outcore/experiments/grid"
	"outcore/web/views"
)

// IDsField is the form field of the numbering checkboxes.
const IDsField = "ids"

// idNumberings are the numberings offered, in the form's order, with
// what each means.
var idNumberings = []struct{ value, note string }{
	{vocab.IDsScattered, "ids scattered over the communities by a keyed permutation (the generator's default)"},
	{vocab.IDsLocal, "ids numbered community by community, most popular first (a graph numbered by crawl or by time)"},
}

// formIDs puts the ticked numberings into the grid's ids axis, or returns
// what is wrong with them ("" when fine).
func formIDs(ticked []string, axes *grid.Axes) string {
	picked, unknown := pickKnown(ticked, []string{vocab.IDsScattered, vocab.IDsLocal})
	if unknown != "" {
		return fmt.Sprintf("node ids: unknown numbering %q (have %s, %s)", unknown, vocab.IDsScattered, vocab.IDsLocal)
	}
	if len(picked) > 0 {
		axes.IDs = picked
	}
	return ""
}

// idsOptions are the checkboxes, ticked as given.
func idsOptions(ticked []string) []views.FormOption {
	out := make([]views.FormOption, 0, len(idNumberings))
	for _, n := range idNumberings {
		out = append(out, views.FormOption{Value: n.value, Label: n.value, Note: n.note, Selected: slices.Contains(ticked, n.value)})
	}
	return out
}
