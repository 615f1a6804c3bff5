package report

import (
	"encoding/csv"
	"io"
	"math"
	"strconv"
	"strings"

	"outcore/store"
)

// CSVWriter writes tidy CSV: one row per observation, one column per
// variable. Text cells that a spreadsheet would run as a formula (starting
// with = + - @, a tab or a carriage return) are prefixed with a single quote;
// numbers are written as numbers (a negative number is data, not a formula).
type CSVWriter struct {
	w   *csv.Writer
	row []string
}

// NewCSVWriter writes to w.
func NewCSVWriter(w io.Writer) *CSVWriter { return &CSVWriter{w: csv.NewWriter(w)} }

// Row writes one row; strings are escaped, numbers formatted, nil and NaN left empty.
func (c *CSVWriter) Row(cells ...any) error {
	c.row = c.row[:0]
	for _, v := range cells {
		c.row = append(c.row, csvCell(v))
	}
	return c.w.Write(c.row)
}

// Flush writes buffered rows and reports any write error.
func (c *CSVWriter) Flush() error {
	c.w.Flush()
	return c.w.Error()
}

func csvCell(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return store.CSVSafe(x)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return ""
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case *float64:
		if x == nil {
			return ""
		}
		return csvCell(*x)
	case *int64:
		if x == nil {
			return ""
		}
		return strconv.FormatInt(*x, 10)
	case float32:
		return csvCell(float64(x))
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case bool:
		return strconv.FormatBool(x)
	}
	panic("report: CSV cell of unexpected type")
}

// WriteChartCSV writes a chart's data, one row per point of each series.
func WriteChartCSV(w io.Writer, ch Chart) error {
	c := NewCSVWriter(w)
	if err := c.Row("chart", "series", "x", "x_label", "y_mean", "y_sd", "y_min", "y_max", "n", "status", "detail", "run_ids"); err != nil {
		return err
	}
	for _, s := range ch.Series {
		for _, p := range s.Points {
			var lo, hi any
			if p.Y != nil {
				lo, hi = p.Min, p.Max
			}
			var sd any
			if p.Y != nil {
				sd = p.SD
			}
			ids := make([]string, len(p.Runs))
			for i, id := range p.Runs {
				ids[i] = strconv.FormatInt(id, 10)
			}
			if err := c.Row(ch.ID, s.Name, p.X, p.Label, p.Y, sd, lo, hi, p.N, p.Status, p.Detail, strings.Join(ids, " ")); err != nil {
				return err
			}
		}
	}
	return c.Flush()
}
