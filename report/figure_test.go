package report

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRenderFigureEveryChart(t *testing.T) {
	cmp := NewComparison(fixtureRuns())
	dir := os.Getenv("OUTCORE_FIGURE_DIR") // set to keep the figures for a look
	for _, ch := range cmp.Charts("pyg+") {
		for _, format := range []string{FigureSVG, FigurePDF} {
			var buf bytes.Buffer
			err := RenderFigure(ch, format, &buf)
			if ch.Empty != "" {
				if !errors.Is(err, ErrNoData) {
					t.Errorf("%s: empty chart rendered: err %v", ch.ID, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s.%s: %v", ch.ID, format, err)
			}
			out := buf.String()
			switch format {
			case FigureSVG:
				if !strings.Contains(out, "<svg") || !strings.Contains(out, "n = ") {
					t.Errorf("%s.svg: no svg element or no n stated", ch.ID)
				}
			case FigurePDF:
				if !strings.HasPrefix(out, "%PDF-") {
					t.Errorf("%s.pdf: not a PDF", ch.ID)
				}
			}
			if dir != "" {
				os.WriteFile(filepath.Join(dir, ch.ID+"."+format), buf.Bytes(), 0o644)
			}
		}
	}
}
