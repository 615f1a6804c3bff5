// Package all imports every training-system variant, so that each
// registers itself with engine/train. It is the one list of variants in
// the code: a binary or test that needs them imports this package
// (docs/ARCHITECTURE.md "Adding a system").
package all

import (
	_ "outcore/engine/system/alipg"
	_ "outcore/engine/system/dglondisk"
	_ "outcore/engine/system/diskgnn"
	_ "outcore/engine/system/gids"
	_ "outcore/engine/system/ginex"
	_ "outcore/engine/system/gnndrive"
	_ "outcore/engine/system/helios"
	_ "outcore/engine/system/mariusgnn"
	_ "outcore/engine/system/pygplus"
)
