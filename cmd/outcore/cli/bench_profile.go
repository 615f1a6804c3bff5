package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"outcore/engine/accel"
)

// benchProfileCmd is `outcore bench profile-fit`: fit an accelerator
// profile (DESIGN §10) to steps timed on a GPU, one JSON line per step
// (accel.Point: the step's shape and step_s), and print the profile file.
func benchProfileCmd() *Command {
	var name, gpu, driver, software, provenance, in string
	fs := newFlagSet("bench profile-fit", nil)
	fs.StringVar(&in, "points", "", "JSON lines of timed steps (accel.Point: model, in_dim, hidden, classes, heads, rows, seeds, layers [{src, dst, edges}], step_s) (required)")
	fs.StringVar(&name, "name", "", "profile name, the file's name under engine/accel/profiles/ (required)")
	fs.StringVar(&gpu, "gpu", "", "the GPU the steps ran on, as nvidia-smi names it (required)")
	fs.StringVar(&driver, "driver", "", "its driver version (required)")
	fs.StringVar(&software, "software", "", "the software that ran the steps, e.g. \"PyTorch 2.4.1, PyG 2.6.1, CUDA 12.4\" (required)")
	fs.StringVar(&provenance, "provenance", "", "where the steps come from: script, dataset, date, machine (required)")
	return &Command{
		Name:  "profile-fit",
		Args:  "--points steps.jsonl --name N --gpu G --driver D --software S --provenance TEXT",
		Short: "fit an accelerator profile for --compute model:PROFILE to steps timed on a GPU",
		Long: "Fits the step-time model of docs/DESIGN.md §10 (intercept + s/FLOP + s/byte copied host-to-device\n" +
			"+ s/kernel, one set per model) to timed steps by least squares on the relative error, and prints\n" +
			"a measured profile with its fit error. Commit it as engine/accel/profiles/<name>.json.",
		Flags: fs,
		Exec: func(ctx context.Context, s Streams, _ []string) error {
			for flag, v := range map[string]string{"points": in, "name": name, "gpu": gpu, "driver": driver, "software": software, "provenance": provenance} {
				if strings.TrimSpace(v) == "" {
					return usagef("--%s is required", flag)
				}
			}
			f, err := os.Open(in)
			if err != nil {
				return err
			}
			defer f.Close()
			pts, err := readPoints(f)
			if err != nil {
				return fmt.Errorf("%s: %w", in, err)
			}
			coef, fe, err := accel.Fit(pts)
			if err != nil {
				return err
			}
			p := accel.Profile{Format: accel.ProfileFormat, Name: name, Kind: accel.KindMeasured, GPU: gpu, Driver: driver,
				Software: software, Provenance: provenance, Coefficients: coef, Fit: &fe}
			b, err := json.MarshalIndent(p, "", "  ")
			if err != nil {
				return err
			}
			if _, err := accel.ParseProfile(b); err != nil {
				return err
			}
			_, err = fmt.Fprintf(s.Out, "%s\n", b)
			return err
		},
	}
}

// readPoints reads JSON lines of accel.Point, naming the line of an error.
func readPoints(r io.Reader) ([]accel.Point, error) {
	var pts []accel.Point
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var p accel.Point
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if err := p.Check(); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		pts = append(pts, p)
	}
	return pts, sc.Err()
}
