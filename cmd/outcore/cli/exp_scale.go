package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"outcore/report"
)

// scaleFigures are the scale figures as the flag's help names them: "scale-epoch (epoch time)".
func scaleFigures() []string {
	var out []string
	for _, id := range report.ScaleChartIDs {
		e, _ := report.ChartByID(id)
		out = append(out, id+" ("+e.Caption+")")
	}
	return out
}

// scaleFiguresFirst are the scale figures as the help's text names them: "epoch time (scale-epoch)".
func scaleFiguresFirst() []string {
	var out []string
	for _, id := range report.ScaleChartIDs {
		e, _ := report.ChartByID(id)
		out = append(out, e.Caption+" ("+id+")")
	}
	return out
}

// expScaleCmd is `outcore exp scale`: the scale figure (epoch time or
// device reads against the dataset's size at one memory share) from the
// stored runs of experiments on datasets of different sizes.
func expScaleCmd() *Command {
	var dataDir, shareS, figure, format, size, out string
	fs := newFlagSet("exp scale", &dataDir)
	fs.StringVar(&shareS, "share", "25%", `memory share: the limit as a share of each dataset's feature bytes ("25%", "0.5"; "none": runs without a limit)`)
	figures := scaleFigures()
	fs.StringVar(&figure, "figure", report.ScaleChartIDs[0], "the figure: "+strings.Join(figures, " or "))
	fs.StringVar(&format, "format", report.FigureSVG, strings.Join(report.ExportFormats, ", ")+" (csv: the figure's data)")
	fs.StringVar(&size, "size", report.SizeWide, "the figure's size, "+strings.Join(report.FigureSizes, " or "))
	fs.StringVar(&out, "out", "", "write to FILE (- = stdout); default scale-FIGURE-SHARE.FORMAT in the current directory")
	return &Command{
		Name: "scale", Args: "ID,ID,... [--share 25%] [--figure " + strings.Join(report.ScaleChartIDs, "|") + "] [--format svg|pdf|csv] [--out FILE]",
		MinArgs: 1, MaxArgs: 1,
		Short: "the scale figure: epoch time or bytes read against dataset size at one memory share, from experiments' runs",
		Long: "Draws each variant's mean " + strings.Join(scaleFiguresFirst(), " or ") + "\n" +
			"against the feature bytes of each experiment's dataset, from the runs whose memory limit is --share of\n" +
			"them (within 2 %). Give experiments on datasets of different sizes, e.g. the same study on medium and\n" +
			"papers-like (scripts/reproduce-compute.sh with DATASETS). Nothing is run.",
		Flags: fs,
		Exec: func(ctx context.Context, s Streams, pos []string) error {
			if len(pos) != 1 {
				return usagef("give the experiments as one comma-separated list: outcore exp scale 3,4")
			}
			var ids []int64
			for _, f := range strings.Split(pos[0], ",") {
				id, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
				if err != nil || id < 1 {
					return usagef("experiment %q: want a positive whole number", f)
				}
				ids = append(ids, id)
			}
			share, err := report.ParseShare(shareS)
			if err != nil {
				return usagef("--share: %v", err)
			}
			if err := report.CheckFormat(format); err != nil {
				return usagef("--format: %v", err)
			}
			if err := report.CheckSize(size); err != nil {
				return usagef("--size: %v", err)
			}
			if err := report.CheckChart(figure, report.ScaleChartIDs); err != nil {
				return usagef("--figure: %v", err)
			}
			return exportScale(ctx, s, dataDir, ids, share, figure, format, size, out)
		},
	}
}

// exportScale loads each experiment's runs and its dataset's size and
// writes the scale figure.
func exportScale(ctx context.Context, s Streams, dataDir string, ids []int64, share float64, figure, format, size, out string) error {
	st, dir, err := openStore(ctx, dataDir)
	if err != nil {
		return err
	}
	defer st.Close()
	sets, meta, err := report.LoadScaleSets(ctx, st, nil, ids, dir)
	if err != nil {
		return err
	}
	ch, err := report.ScaleChart(figure, sets, share)
	if err != nil {
		return err
	}
	return writeChart(s, ch, format, size, meta, out, fmt.Sprintf("%s-%g.%s", figure, share*100, format))
}
