// Package version names this build of outcore, the same way in the server,
// the runner and every training child.
package version

import "runtime/debug"

// Commit is set at link time by the Makefile
// (-X outcore/internal/version.Commit=<short hash>); empty otherwise.
var Commit string

// String returns the module version of a tagged build, else "devel+<commit>"
// when the commit is known, else "devel".
func String() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	if Commit != "" {
		return "devel+" + Commit
	}
	return "devel"
}
