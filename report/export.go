package report

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// FormatCSV is a chart's data as tidy CSV (WriteChartCSV); FigureSVG and
// FigurePDF are its figure (RenderFigure).
const FormatCSV = "csv"

// ExportFormats lists the formats WriteChart writes, CSV first.
var ExportFormats = []string{FormatCSV, FigureSVG, FigurePDF}

// ErrUnknownChart is wrapped by CheckChart's error.
var ErrUnknownChart = errors.New("no chart")

// CheckChart reports whether id is one of known (ChartIDs or RunChartIDs);
// the error names the known ones.
func CheckChart(id string, known []string) error {
	if slices.Contains(known, id) {
		return nil
	}
	return fmt.Errorf("%w %q (have %s)", ErrUnknownChart, id, strings.Join(known, ", "))
}

// CheckFormat reports whether format is one of ExportFormats.
func CheckFormat(format string) error {
	if slices.Contains(ExportFormats, format) {
		return nil
	}
	return fmt.Errorf("format %q: want %s", format, strings.Join(ExportFormats, ", "))
}

// WriteChart writes ch in format: its data as CSV (always, even with no
// rows), or its figure, which fails with an error wrapping ErrNoData when
// the chart has nothing to draw.
func WriteChart(w io.Writer, ch Chart, format string) error {
	return WriteChartWith(w, ch, format, FigureOptions{})
}

// WriteChartWith is WriteChart with a figure's size preset and metadata.
func WriteChartWith(w io.Writer, ch Chart, format string, opts FigureOptions) error {
	if format == FormatCSV {
		return WriteChartCSV(w, ch)
	}
	if err := CheckFormat(format); err != nil {
		return err
	}
	return RenderFigureWith(ch, format, w, opts)
}

// FileName is the name a chart's file goes by, the same from the dashboard
// and the command line: "experiment-3-epoch-vs-mem.pdf", "run-12-run-memory.csv".
// scope is "experiment" or "run".
func FileName(scope string, id int64, chartID, format string) string {
	return fmt.Sprintf("%s-%d-%s.%s", scope, id, chartID, format)
}
