package version

import (
	"runtime/debug"
	"testing"
)

func TestDescribe(t *testing.T) {
	for _, c := range []struct {
		commit string
		dirty  bool
		want   string
	}{
		{"", false, "devel"},
		{"", true, "devel"},
		{"0123456789ab", false, "devel+0123456789ab"},
		{"0123456789ab", true, "devel+0123456789ab-dirty"},
	} {
		if got := describe(c.commit, c.dirty); got != c.want {
			t.Errorf("describe(%q, %v) = %q, want %q", c.commit, c.dirty, got, c.want)
		}
	}
}

func TestVCSStamp(t *testing.T) {
	commit, dirty := vcsStamp([]debug.BuildSetting{
		{Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
		{Key: "vcs.modified", Value: "true"},
	})
	if commit != "0123456789ab" || !dirty {
		t.Errorf("vcsStamp = %q, %v", commit, dirty)
	}
}

func TestLinkerStamp(t *testing.T) {
	defer func(c, d string) { Commit, Dirty = c, d }(Commit, Dirty)
	Commit, Dirty = "abcdef012345", "true"
	if got := String(); got != "devel+abcdef012345-dirty" {
		t.Errorf("String() = %q", got)
	}
	Dirty = ""
	if got := String(); got != "devel+abcdef012345" {
		t.Errorf("String() = %q", got)
	}
}
