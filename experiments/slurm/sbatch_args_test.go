package slurm

import (
	"reflect"
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

func TestSplitArgs(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
		err  string
	}{
		{"", nil, ""},
		{"  --qos=low   --account a1 ", nil, `"a1" is not an sbatch option`},
		{"--qos=low --account=a1", []string{"--qos=low", "--account=a1"}, ""},
		{`--comment='two words' --constraint="a&b" --x=\ y`, []string{"--comment=two words", "--constraint=a&b", "--x= y"}, ""},
		{`--comment="say \"hi\" \\ ok"`, []string{`--comment=say "hi" \ ok`}, ""},
		{`--gres=gpu:1 -C 'x'`, nil, `"x" is not an sbatch option`},
		{`--comment='open`, nil, "unterminated '"},
		{`--comment="open`, nil, `unterminated "`},
		{`--x=a\`, nil, "ends with a backslash"},
		{`--x=$(rm -rf /)`, []string{"--x=$(rm", "-rf"}, `"/)" is not an sbatch option`},
	} {
		got, err := SplitArgs(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("SplitArgs(%q): err %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("SplitArgs(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

// FuzzSplitArgs: every word SplitArgs returns is an option, and joining
// single-quoted words splits back to the same words.
func FuzzSplitArgs(f *testing.F) {
	f.Add(`--comment='two words' --constraint="a&b"`)
	f.Add(`--x=\ y`)
	f.Fuzz(func(t *testing.T, s string) {
		args, err := SplitArgs(s)
		if err != nil {
			return
		}
		var quoted []string
		for _, a := range args {
			if !strings.HasPrefix(a, "-") {
				t.Fatalf("word %q of %q is not an option", a, s)
			}
			quoted = append(quoted, ShellQuote(a))
		}
		again, err := SplitArgs(strings.Join(quoted, " "))
		if err != nil || !reflect.DeepEqual(again, args) && len(args) > 0 {
			t.Fatalf("round trip of %q: %q, %v; want %q", s, again, err, args)
		}
	})
}
