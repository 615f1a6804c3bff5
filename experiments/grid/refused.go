package grid

import "outcore/engine/vocab"

// RefusedCell is a grid cell skipped at creation: it could not start (its
// memory limit is below the variant's floor on its dataset). The type is
// engine/vocab's, so that the store keeps the list without importing the
// grid.
type RefusedCell = vocab.RefusedCell
