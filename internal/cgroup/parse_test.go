package cgroup

import (
	"os"
	"path/filepath"
	"testing"

	"outcore/internal/osutil"
)

func readFixture(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestParseMountinfo(t *testing.T) {
	for _, tc := range []struct {
		file     string
		wantV1   string // mount point of the v1 memory controller, "" = none
		wantV2   string // mount point of cgroup2, "" = none
		v1Root   string
		escapedP string // a mount point with an escape, decoded
	}{
		{file: "mountinfo-hybrid-v1.txt", wantV1: "/sys/fs/cgroup/memory", wantV2: "/sys/fs/cgroup/unified", v1Root: "/"},
		{file: "mountinfo-v2.txt", wantV2: "/sys/fs/cgroup"},
		{file: "mountinfo-container.txt", wantV1: "/sys/fs/cgroup/memory", v1Root: "/docker/abc123", escapedP: "/sys/fs/cgroup/cpu set"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			ms, err := parseMountinfo(readFixture(t, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			var v1, v2, v1root string
			esc := false
			for _, m := range ms {
				if m.FSType == "cgroup" && hasOpt(m.Opts, "memory") {
					v1, v1root = m.Point, m.Root
				}
				if m.FSType == "cgroup2" {
					v2 = m.Point
				}
				if tc.escapedP != "" && m.Point == tc.escapedP {
					esc = true
				}
			}
			if v1 != tc.wantV1 || v2 != tc.wantV2 || v1root != tc.v1Root {
				t.Fatalf("v1 %q (root %q) v2 %q; want %q (%q) %q", v1, v1root, v2, tc.wantV1, tc.v1Root, tc.wantV2)
			}
			if tc.escapedP != "" && !esc {
				t.Fatalf("escaped mount point %q not decoded: %+v", tc.escapedP, ms)
			}
		})
	}
}

func TestProcCgroupsAndGroupDir(t *testing.T) {
	hy, err := osutil.ParseProcCgroups(readFixture(t, "cgroup-hybrid.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if hy["memory"] != "/process_api/cafe" || hy[""] != "/" || hy["cpuacct"] != "/" {
		t.Fatalf("hybrid: %v", hy)
	}
	v2, _ := osutil.ParseProcCgroups(readFixture(t, "cgroup-v2.txt"))
	if v2[""] != "/user.slice/user-1000.slice/session-2.scope" {
		t.Fatalf("v2: %v", v2)
	}
	for _, tc := range []struct {
		m       mount
		cg      string
		wantDir string
	}{
		{mount{Root: "/", Point: "/sys/fs/cgroup/memory"}, "/process_api/cafe", "/sys/fs/cgroup/memory/process_api/cafe"},
		{mount{Root: "/docker/abc", Point: "/sys/fs/cgroup/memory"}, "/docker/abc", "/sys/fs/cgroup/memory"},
		{mount{Root: "/docker/abc", Point: "/sys/fs/cgroup/memory"}, "/docker/abc/x", "/sys/fs/cgroup/memory/x"},
		{mount{Root: "/docker/abc", Point: "/sys/fs/cgroup/memory"}, "/other", ""},
		{mount{Root: "/", Point: "/sys/fs/cgroup"}, "/", "/sys/fs/cgroup"},
	} {
		if got := groupDir(tc.m, tc.cg); got != tc.wantDir {
			t.Errorf("groupDir(%+v, %q) = %q, want %q", tc.m, tc.cg, got, tc.wantDir)
		}
	}
}

func TestParseKeyed(t *testing.T) {
	s := "oom_kill_disable 0\nunder_oom 1\noom_kill 3\n"
	if v, ok := parseKeyed(s, "oom_kill"); !ok || v != 3 {
		t.Fatalf("oom_kill = %d %v", v, ok)
	}
	if v, ok := parseKeyed(s, "under_oom"); !ok || v != 1 {
		t.Fatalf("under_oom = %d %v", v, ok)
	}
	if _, ok := parseKeyed("low 0\nhigh 2\n", "oom_kill"); ok {
		t.Fatal("found a missing key")
	}
}
