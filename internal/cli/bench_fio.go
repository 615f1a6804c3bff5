package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strconv"

	"outcore/engine/metrics"
)

// fioChecks repeats three of p's measurements with fio (io_uring,
// O_DIRECT, the same file): 512 B and 4 KiB random reads at depth, and
// the sequential read. Each check pairs ours with fio's.
func fioChecks(ctx context.Context, p *metrics.DeviceProfile, file string, depth int, seconds float64) ([]metrics.FioCheck, error) {
	var out []metrics.FioCheck
	for _, bs := range []int64{512, 4096} {
		ours := 0.0
		for _, pt := range p.Random {
			if pt.Bytes == bs && pt.Depth == depth {
				ours = pt.IOPS
			}
		}
		if ours == 0 {
			continue // not measured at this size and depth
		}
		iops, _, err := runFio(ctx, file, "randread", bs, depth, seconds)
		if err != nil {
			return nil, err
		}
		out = append(out, metrics.FioCheck{What: fmt.Sprintf("randread %d B depth %d (IOPS)", bs, depth), Ours: ours, Fio: iops, Ratio: ours / iops})
	}
	_, bw, err := runFio(ctx, file, "read", p.SeqRequestBytes, p.SeqDepth, seconds)
	if err != nil {
		return nil, err
	}
	out = append(out, metrics.FioCheck{What: fmt.Sprintf("read %d B depth %d (bytes/s)", p.SeqRequestBytes, p.SeqDepth), Ours: p.SeqBytesPerS, Fio: bw, Ratio: p.SeqBytesPerS / bw})
	return out, nil
}

// runFio runs one fio job on file and returns its read IOPS and bytes/s.
func runFio(ctx context.Context, file, rw string, bs int64, depth int, seconds float64) (iops, bw float64, err error) {
	args := []string{"--name=outcore", "--filename=" + file, "--readonly", "--rw=" + rw, "--bs=" + strconv.FormatInt(bs, 10),
		"--iodepth=" + strconv.Itoa(depth), "--ioengine=io_uring", "--direct=1", "--time_based",
		"--runtime=" + strconv.FormatFloat(max(seconds, 1), 'f', 0, 64), "--output-format=json"}
	b, err := exec.CommandContext(ctx, "fio", args...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return 0, 0, fmt.Errorf("fio %v: %w: %s", args, err, ee.Stderr)
		}
		return 0, 0, fmt.Errorf("fio: %w", err)
	}
	return parseFio(b)
}

// parseFio reads fio's JSON output: the first job's read IOPS and bytes/s.
func parseFio(b []byte) (iops, bw float64, err error) {
	var r struct {
		Jobs []struct {
			Error int `json:"error"`
			Read  struct {
				IOPS    float64 `json:"iops"`
				BWBytes float64 `json:"bw_bytes"`
			} `json:"read"`
		} `json:"jobs"`
	}
	// fio may print notes before its JSON: start at the first '{'.
	for i, c := range b {
		if c == '{' {
			b = b[i:]
			break
		}
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return 0, 0, fmt.Errorf("fio output: %w", err)
	}
	if len(r.Jobs) == 0 {
		return 0, 0, errors.New("fio output: no job")
	}
	j := r.Jobs[0]
	if j.Error != 0 || !(j.Read.IOPS > 0) || !(j.Read.BWBytes > 0) {
		return 0, 0, fmt.Errorf("fio output: job error %d, %v IOPS, %v bytes/s", j.Error, j.Read.IOPS, j.Read.BWBytes)
	}
	return j.Read.IOPS, j.Read.BWBytes, nil
}
