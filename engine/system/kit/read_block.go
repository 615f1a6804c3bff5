package kit

// Read granularity (docs/DESIGN.md §9). The papers' artifacts read the
// SSD at different granularities, which decides the bytes a run reads as
// much as any cache does: Ginex's artifact reads each missing feature row
// with its own O_DIRECT pread of the aligned 4 KiB block holding it (8 KiB
// when the row straddles two) and each uncached neighbour list from its
// aligned start, at least 8 KiB; GNNDrive's submits one io_uring request
// per row at the device's sector size (512 B). A variant declares the
// option read_block with its artifact's value as the default, so that the
// same run can be repeated at the other granularity and the bytes read
// compared (scripts/bench-variants.sh).

import (
	"fmt"

	"outcore/engine/train"
)

// ReadBlockOption is the variant option naming the read granularity.
const ReadBlockOption = "read_block"

// ReadBlockHelp is the option's help text, with the variant's artifact.
func ReadBlockHelp(artifact string) string {
	return "read granularity in bytes, a power of two from 512 to 1 MiB: every row or range read from the SSD is widened to the aligned blocks of this size that cover it (" + artifact + ")"
}

// ReadBlock reads the read_block option (def when absent): a power of two
// in [512, 1 MiB].
func ReadBlock(cfg train.Config, def int64) (int64, error) {
	v, err := train.Opts(cfg.Options).Bytes(ReadBlockOption, 0, def)
	if err != nil {
		return 0, err
	}
	if v < 512 || v > 1<<20 || v&(v-1) != 0 {
		return 0, fmt.Errorf("%w: %s %d, want a power of two from 512 to 1048576 bytes", train.ErrConfig, ReadBlockOption, v)
	}
	return v, nil
}
