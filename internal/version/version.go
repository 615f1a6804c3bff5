// Package version names this build of outcore, the same way in the server,
// the runner and every training child.
package version

import "runtime/debug"

// Commit and Dirty are set at link time by the Makefile
// (-X outcore/internal/version.Commit=<short hash>, and Dirty=true when
// `git status --porcelain` lists changes); empty otherwise, when the build
// information's VCS stamp (go build with -buildvcs) is used instead.
var (
	Commit string
	Dirty  string
)

// String returns the module version of a tagged build, else
// "devel+<commit>", with "-dirty" when the tree the build came from had
// uncommitted changes, else "devel".
func String() string {
	bi, ok := debug.ReadBuildInfo()
	if ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	commit, dirty := Commit, Dirty == "true"
	if commit == "" && ok {
		commit, dirty = vcsStamp(bi.Settings)
	}
	return describe(commit, dirty)
}

// vcsStamp reads the commit and modified flag that go build records.
func vcsStamp(settings []debug.BuildSetting) (commit string, dirty bool) {
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
			if len(commit) > 12 {
				commit = commit[:12]
			}
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	return commit, dirty
}

func describe(commit string, dirty bool) string {
	if commit == "" {
		return "devel"
	}
	if dirty {
		return "devel+" + commit + "-dirty"
	}
	return "devel+" + commit
}
