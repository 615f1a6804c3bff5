package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExpScale draws the scale figure from real runs: the same two
// variants on two datasets of different sizes (tiny, 1 MiB of features,
// and a 4 MiB one), one experiment each, then `exp scale` over both:
// one line per variant with a point per dataset, as SVG and as CSV.
func TestExpScale(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real training")
	}
	dir := t.TempDir()
	for _, gen := range [][]string{{"--preset", "tiny"}, {"--preset", "tiny", "--name", "tiny4", "--nodes", "32768"}} {
		if code, _, stderr := runCLI(append([]string{"data", "gen", "--quiet", "--data-dir", dir}, gen...)...); code != 0 {
			t.Fatalf("data gen %v: %s", gen, stderr)
		}
	}
	for _, ds := range []string{"tiny", "tiny4"} {
		grid := filepath.Join(dir, ds+".json")
		body := `{"dataset":"` + ds + `","epochs":1,"compute":"none","axes":{"system":["gnndrive","diskgnn"],"mem_limit":["none"]}}`
		if err := os.WriteFile(grid, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, out, stderr := runCLI("exp", "create", "--data-dir", dir, "--file", grid, "--wait"); code != 0 {
			t.Fatalf("exp create %s: %s\n%s", ds, out, stderr)
		}
	}
	svg := filepath.Join(dir, "scale.svg")
	if code, _, stderr := runCLI("exp", "scale", "1,2", "--data-dir", dir, "--share", "none", "--out", svg); code != 0 {
		t.Fatalf("exp scale: %s", stderr)
	}
	if b, err := os.ReadFile(svg); err != nil || !strings.Contains(string(b), "<svg") || !strings.Contains(string(b), "diskgnn") {
		t.Errorf("figure: %v, %d bytes", err, len(b))
	}
	code, out, stderr := runCLI("exp", "scale", "1,2", "--data-dir", dir, "--share", "none", "--figure", "scale-read", "--format", "csv", "--out", "-")
	if code != 0 {
		t.Fatalf("exp scale csv: %s", stderr)
	}
	for _, w := range []string{"scale-read,gnndrive,line,,1048576,bytes,tiny (", "scale-read,gnndrive,line,,4194304,bytes,tiny4 (", "scale-read,diskgnn,line,,4194304,"} {
		if !strings.Contains(out, w) {
			t.Errorf("csv lacks %q:\n%s", w, out)
		}
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"1,x"}, `experiment "x"`},
		{[]string{"1,2", "--share", "-3%"}, "--share"},
		{[]string{"1,2", "--figure", "epoch-vs-mem"}, "--figure"},
		{[]string{"1,2", "--share", "25%"}, "No run of these experiments has a memory limit 25 %"},
		{[]string{"9"}, "9"},
	} {
		if code, _, stderr := runCLI(append([]string{"exp", "scale", "--data-dir", dir}, bad.args...)...); code == 0 || !strings.Contains(stderr, bad.want) {
			t.Errorf("exp scale %v: exit %d, %s; want an error naming %q", bad.args, code, stderr, bad.want)
		}
	}
}
