package web

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestGridCannotChooseTheExecutor reproduces the command execution
// through a grid against the JSON API of a server started with the local
// executor (serve's default): a grid naming slurm, with sbatch options
// that set BASH_ENV through --export and a node data directory of
// "/etc/../root", is refused with 422 naming each setting, and nothing is
// stored; so is a setting out of its range.
func TestGridCannotChooseTheExecutor(t *testing.T) {
	e := newEnv(t)
	e.login()
	code, m := e.api("POST", "/api/experiments", `{"dataset":"tiny","system":"pyg+","epochs":1,"executor":"slurm",
		"slurm":{"args":"--export=ALL,BASH_ENV=$(id>/tmp/outcore-pwned)","node_data_dir":"/etc/../root"}}`)
	msg := fmt.Sprint(m["problems"])
	if code != http.StatusUnprocessableEntity {
		t.Fatalf("create: %d %v, want 422", code, m)
	}
	for _, want := range []string{`executor: "slurm" is not offered here`, "sbatch option --export is not allowed", `slurm.node_data_dir: "/etc/../root": no ".." allowed`} {
		if !strings.Contains(msg, want) {
			t.Errorf("problems %s lack %q", msg, want)
		}
	}
	code, m = e.api("POST", "/api/experiments", `{"dataset":"tiny","system":"pyg+","weight_decay":1e308}`)
	if code != http.StatusUnprocessableEntity || !strings.Contains(fmt.Sprint(m["problems"]), "weight_decay: 1e+308 is not a number from 0 to 1") {
		t.Errorf("weight_decay 1e308: %d %v", code, m)
	}
	if code, m := e.api("GET", "/api/experiments", ""); code != 200 || fmt.Sprint(m["experiments"]) != "[]" {
		t.Errorf("refused grids stored experiments: %d %v", code, m)
	}
}
