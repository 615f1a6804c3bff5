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
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.FormatFloat(x, 'f', -1, 64) // whole numbers (bytes) in full
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

// ChartCSVHeader are the columns of a chart's CSV.
var ChartCSVHeader = []string{"chart", "series", "role", "parent", "x", "x_unit", "x_label",
	"variant", "mem_limit_bytes", "feature_dim", "batch_size", "model", "fanout",
	"y_mean", "y_sd", "y_min", "y_max", "n", "status", "detail", "run_ids"}

// WriteChartCSV writes a chart's data, one row per point of each series:
// x in real units (x_unit: bytes, s, epoch; empty where the x is a
// category without units, e.g. "variant · grid point"), never a category
// index; the grid point of the value (variant, memory limit in bytes,
// dimension, batch size, model, fanout) where it has one; role says how
// the row is drawn ("line", "bar", "stack" for a layer of a stacked bar,
// "marker" for the epoch-time mark on it), parent the stage a nested stage
// layer is part of. The stacked layers of a bar add up to its height.
func WriteChartCSV(w io.Writer, ch Chart) error {
	c := NewCSVWriter(w)
	header := make([]any, len(ChartCSVHeader))
	for i, h := range ChartCSVHeader {
		header[i] = h
	}
	if err := c.Row(header...); err != nil {
		return err
	}
	for _, s := range ch.Series {
		role := ch.Kind
		if role == "scatter" {
			role = "line"
		}
		if s.Role != "" {
			role = s.Role
		}
		for _, p := range s.Points {
			if p.Status == StatusNone {
				continue
			}
			var x any
			switch {
			case ch.XType != "category":
				x = p.X
			case p.XReal != nil:
				x = *p.XReal
			}
			var variant, model, fanout any
			var mem, dim, batch any
			if p.Cell != nil {
				variant, model, fanout = p.Cell.Variant, p.Cell.Model, p.Cell.Fanout
				mem, dim, batch = p.Cell.MemLimit, p.Cell.Dim, p.Cell.Batch
			}
			var lo, hi, sd any
			if p.Y != nil {
				lo, hi, sd = p.Min, p.Max, p.SD
			}
			ids := make([]string, len(p.Runs))
			for i, id := range p.Runs {
				ids[i] = strconv.FormatInt(id, 10)
			}
			if err := c.Row(ch.ID, s.Name, role, s.Parent, x, ch.XUnit, p.Label,
				variant, mem, dim, batch, model, fanout,
				p.Y, sd, lo, hi, p.N, p.Status, p.Detail, strings.Join(ids, " ")); err != nil {
				return err
			}
		}
	}
	return c.Flush()
}
