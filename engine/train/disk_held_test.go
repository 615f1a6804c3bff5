package train

import "testing"

// HoldDisk's account: the feature files' sum, every file listed, nothing
// without a call, no blowup without a dataset, and bad records refused.
func TestHoldDisk(t *testing.T) {
	var e Env
	if fb, x, files := e.diskAccount(); fb != nil || x != nil || files != nil {
		t.Fatalf("no HoldDisk: %v %v %v", fb, x, files)
	}
	if err := e.HoldDisk(map[string]int64{"a": 10, "b": 5, "c": 100}, "a", "b"); err != nil {
		t.Fatal(err)
	}
	fb, x, files := e.diskAccount()
	if fb == nil || *fb != 15 || x != nil || len(files) != 3 || files["c"] != 100 {
		t.Fatalf("account %v %v %v, want 15 feature bytes of 3 files and no blowup without a dataset", fb, x, files)
	}
	if err := e.HoldDisk(map[string]int64{"a": -1}); err == nil {
		t.Error("negative size accepted")
	}
	if err := e.HoldDisk(map[string]int64{"a": 1}, "z"); err == nil {
		t.Error("feature file not among the files accepted")
	}
	if fb, _, _ := e.diskAccount(); *fb != 15 {
		t.Errorf("a refused record replaced the account: %d", *fb)
	}
}
