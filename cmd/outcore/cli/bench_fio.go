package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"

	"outcore/engine/metrics"
)

// fioJob is one measurement both tools repeat: random reads of bs bytes
// at depth, or (seq) reads in file order.
type fioJob struct {
	bs    int64
	depth int
	seq   bool
}

// what names the job and its unit for the report.
func (j fioJob) what() string {
	if j.seq {
		return fmt.Sprintf("read %d B depth %d (bytes/s)", j.bs, j.depth)
	}
	return fmt.Sprintf("randread %d B depth %d (IOPS)", j.bs, j.depth)
}

// fioChecks repeats three measurements with fio (io_uring, O_DIRECT, the
// same file and job shape): 512 B and 4 KiB random reads at depth, and
// the sequential read. Each is run pairs times as ours then fio back to
// back, so both see the device in the same state; the check keeps the
// medians and the median of the pairs' ratios. ours measures one job.
func fioChecks(ctx context.Context, p *metrics.DeviceProfile, file string, depth, pairs int, seconds float64, ours func(fioJob) (float64, error)) ([]metrics.FioCheck, error) {
	var jobs []fioJob
	for _, bs := range []int64{512, 4096} {
		for _, pt := range p.Random {
			if pt.Bytes == bs && pt.Depth == depth {
				jobs = append(jobs, fioJob{bs: bs, depth: depth})
				break
			}
		}
	}
	jobs = append(jobs, fioJob{bs: p.SeqRequestBytes, depth: p.SeqDepth, seq: true})
	var out []metrics.FioCheck
	for _, j := range jobs {
		var os, fs, rs []float64
		for range pairs {
			o, err := ours(j)
			if err != nil {
				return nil, err
			}
			rw := "randread"
			if j.seq {
				rw = "read"
			}
			iops, bw, err := runFio(ctx, file, rw, j.bs, j.depth, seconds)
			if err != nil {
				return nil, err
			}
			f := iops
			if j.seq {
				f = bw
			}
			os, fs, rs = append(os, o), append(fs, f), append(rs, o/f)
		}
		out = append(out, metrics.FioCheck{What: j.what(), Ours: median(os), Fio: median(fs), Ratio: median(rs), Pairs: pairs, PairRatios: rs})
	}
	return out, nil
}

// median of a non-empty list (the mean of the middle two for even lengths).
func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// runFio runs one fio job on file and returns its read IOPS and bytes/s.
func runFio(ctx context.Context, file, rw string, bs int64, depth int, seconds float64) (iops, bw float64, err error) {
	args := []string{"--name=outcore", "--filename=" + file, "--readonly", "--rw=" + rw, "--bs=" + strconv.FormatInt(bs, 10),
		"--iodepth=" + strconv.Itoa(depth), "--ioengine=io_uring", "--direct=1", "--time_based",
		"--runtime=" + strconv.FormatInt(max(int64(seconds*1000), 1), 10) + "ms", "--output-format=json"}
	b, _, err := execFio(ctx, args)
	if err != nil {
		return 0, 0, err
	}
	return parseFio(b)
}

// execFio runs fio with args and returns its standard output and process
// state; a failure names the arguments and what fio printed on stderr.
func execFio(ctx context.Context, args []string) ([]byte, *os.ProcessState, error) {
	cmd := exec.CommandContext(ctx, "fio", args...)
	b, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, nil, fmt.Errorf("fio %v: %w: %s", args, err, ee.Stderr)
		}
		return nil, nil, fmt.Errorf("fio: %w", err)
	}
	return b, cmd.ProcessState, nil
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
	if err := decodeFio(b, &r, func() int { return len(r.Jobs) }); err != nil {
		return 0, 0, err
	}
	j := r.Jobs[0]
	if j.Error != 0 || !(j.Read.IOPS > 0) || !(j.Read.BWBytes > 0) {
		return 0, 0, fmt.Errorf("fio output: job error %d, %v IOPS, %v bytes/s", j.Error, j.Read.IOPS, j.Read.BWBytes)
	}
	return j.Read.IOPS, j.Read.BWBytes, nil
}

// decodeFio decodes fio's JSON output into r, skipping the notes fio may
// print before it (from the first '{'); jobs counts the decoded jobs, and
// none is an error.
func decodeFio(b []byte, r any, jobs func() int) error {
	for i, c := range b {
		if c == '{' {
			b = b[i:]
			break
		}
	}
	if err := json.Unmarshal(b, r); err != nil {
		return fmt.Errorf("fio output: %w", err)
	}
	if jobs() == 0 {
		return errors.New("fio output: no job")
	}
	return nil
}
