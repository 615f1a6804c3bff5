package experiments

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckSbatchArg(t *testing.T) {
	for _, c := range []struct{ arg, err string }{
		{"--qos=low", ""},
		{"--account=proj_1", ""},
		{"--comment=two words, ok", ""},
		{"--constraint=ssd,avx2", ""},
		{"--gres=gpu:a100:1", ""},
		{"--nodelist=node[1-4],gpu2", ""},
		{"--nice=100", ""},
		{"--tmp=20G", ""},
		{"--hint=nomultithread", ""},
		{"--exclusive", ""},
		{"--no-requeue", ""},
		{"--export=ALL,BASH_ENV=$(id>/tmp/x)", "--export is not allowed: outcore sets the job's environment"},
		{"--export", "--export is not allowed"},
		{"--chdir=/root", "--chdir is not allowed"},
		{"--output=/etc/x", "--output is not allowed"},
		{"--wrap=id", "--wrap is not allowed"},
		{"--uid=0", "--uid is not allowed"},
		{"--mem=1T", "--mem is not allowed"},
		{"--qos", "--qos needs a value"},
		{"--qos=", "--qos=\"\": want a QOS name"},
		{"--qos=a;id", `--qos="a;id"`},
		{"--comment=$(id)", `--comment="$(id)"`},
		{"--comment=`id`", "--comment="},
		{"--constraint=a|b", "--constraint="},
		{"--nodelist=n1;id", "--nodelist="},
		{"--nice=-5", "from 0 to 10000"},
		{"--exclusive=user", "takes no value"},
		{"-A=x", "write the long form"},
		{"qos=low", "is not an sbatch option"},
		{"--bogus=1", "is not allowed (allowed: --account, --comment"},
	} {
		err := CheckSbatchArg(c.arg)
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("CheckSbatchArg(%q) = %v, want %q", c.arg, err, c.err)
		}
	}
}

func TestConfineNodeDataDir(t *testing.T) {
	root := t.TempDir()
	for _, c := range []struct{ p, err string }{
		{filepath.Join(root, "node"), ""},
		{filepath.Join(root, "a", "b"), ""},
		{root, ""},
		{"/etc/../root", `no ".." allowed`},
		{root + "/x/../../y", `no ".." allowed`},
		{"/root", "is outside the folder"},
		{root + "x", "is outside the folder"},
		{"relative/dir", "not an absolute path"},
		{root + "/a\nb", "control character"},
		{root + "/%j", "'%'"},
	} {
		got, err := ConfineNodeDataDir(root, c.p)
		if c.err == "" && (err != nil || got != filepath.Clean(c.p)) || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("ConfineNodeDataDir(%q) = %q, %v; want %q", c.p, got, err, c.err)
		}
	}
}

// sbatchUnsafe are the characters no accepted sbatch argument may hold:
// a shell's metacharacters, quotes, path separators, blanks other than
// the space of a comment, and control characters.
const sbatchUnsafe = "$`;|&<>(){}'\"\\*?!~#/\t\n\r\x00"

// FuzzSbatchArgs: an accepted argument list (ParseSbatchArgs, as a grid's
// slurm.args and --slurm-args are read) holds only options of the
// allow-list, each with a value free of shell metacharacters and paths,
// and never an option outcore keeps to itself.
func FuzzSbatchArgs(f *testing.F) {
	for _, s := range []string{
		"--qos=low --account=a1", `--comment='two words' --constraint=ssd`, "--export=ALL,BASH_ENV=$(id)",
		"--nodelist=node[1-4] --exclusive", "--chdir=/root", `--comment="a\"b"`, "--gres=gpu:1 --nice=5",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		args, err := ParseSbatchArgs(s)
		if err != nil {
			return
		}
		for _, a := range args {
			name, value, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
			if !strings.HasPrefix(a, "--") {
				t.Fatalf("%q accepted from %q: not a long option", a, s)
			}
			if _, ok := sbatchAllowed[name]; !ok {
				t.Fatalf("%q accepted from %q: --%s is not on the allow-list", a, s, name)
			}
			if _, refused := sbatchRefused[name]; refused {
				t.Fatalf("%q accepted from %q", a, s)
			}
			if strings.ContainsAny(value, sbatchUnsafe) || strings.ContainsAny(name, sbatchUnsafe+" =") {
				t.Fatalf("%q accepted from %q: holds an unsafe character", a, s)
			}
		}
	})
}

// FuzzConfineNodeDataDir: an accepted node data directory is absolute,
// clean, holds no "..", no control character and lies inside the root.
func FuzzConfineNodeDataDir(f *testing.F) {
	root := f.TempDir()
	for _, s := range []string{"/etc/../root", root + "/node", root + "/../x", "/root", root + "/a b/c", root + "//x/./y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		got, err := ConfineNodeDataDir(root, p)
		if err != nil {
			return
		}
		rel, rerr := filepath.Rel(root, got)
		if !filepath.IsAbs(got) || got != filepath.Clean(got) || rerr != nil || rel == ".." || strings.HasPrefix(rel, "../") ||
			strings.Contains(p, "/../") || strings.HasSuffix(p, "/..") || strings.ContainsAny(got, "\x00\n\r%") {
			t.Fatalf("ConfineNodeDataDir(%q) = %q", p, got)
		}
	})
}
