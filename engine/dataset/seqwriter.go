package dataset

import (
	"os"

	"outcore/internal/osutil"
)

// newSeqWriter writes a dataset file sequentially, its page cache written
// back and dropped as it goes (osutil.SeqWriter).
func newSeqWriter(f *os.File) *osutil.SeqWriter { return osutil.NewSeqWriter(f) }
