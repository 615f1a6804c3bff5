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

// ReadBlockOption is the variant option naming the read granularity.
const ReadBlockOption = "read_block"

// ReadBlockHelp is the option's help text, with the variant's artifact.
func ReadBlockHelp(artifact string) string {
	return "read granularity in bytes, a power of two from 512 to 1 MiB: every row or range read from the SSD is widened to the aligned blocks of this size that cover it (" + artifact + ")"
}

// ReadBlock binds the read_block option: a power of two in [512, 1 MiB],
// def (the variant's artifact's granularity) when absent.
func (b *Binder) ReadBlock(dst *int64, def int64, artifact string) {
	b.Bytes(dst, ReadBlockOption, def, ReadBlockHelp(artifact), Range(512, 1<<20), PowerOfTwo())
}
