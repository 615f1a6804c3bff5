package cli

import (
	"slices"
	"strings"
	"testing"
)

// fio's JSON output as `bench device` reads it: notes before the JSON are
// skipped; a failed job, no job or no reads is an error naming it.
func TestParseFio(t *testing.T) {
	iops, bw, err := parseFio([]byte("note: both iodepth >= 1 and synchronous I/O engine are selected\n" +
		`{"fio version":"fio-3.33","jobs":[{"jobname":"outcore","error":0,"read":{"iops":81234.5,"bw_bytes":41592064}}]}`))
	if err != nil || iops != 81234.5 || bw != 41592064 {
		t.Fatalf("%v %v %v", iops, bw, err)
	}
	for _, c := range []struct{ in, want string }{
		{`{"jobs":[]}`, "no job"},
		{`{"jobs":[{"error":5,"read":{"iops":1,"bw_bytes":1}}]}`, "job error 5"},
		{`{"jobs":[{"error":0,"read":{"iops":0,"bw_bytes":0}}]}`, "0 IOPS"},
		{`fio: engine io_uring not loadable`, "fio output"},
	} {
		if _, _, err := parseFio([]byte(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.in, err, c.want)
		}
	}
}

// TestMedian covers odd and even lengths and leaves its input unsorted.
func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{[]float64{3}, 3}, {[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}, {[]float64{0.9, 1.1}, 1}} {
		in := slices.Clone(c.in)
		if got := median(in); got != c.want || !slices.Equal(in, c.in) {
			t.Errorf("median(%v) = %v (input now %v), want %v", c.in, got, in, c.want)
		}
	}
}
