package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
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

// TestFigureTextMetadataAndLayout: the PDF shows "±" (not "Â±"), both
// formats carry the experiment, version and host, the SVG parses, uses a
// sans-serif font and has the preset's size.
func TestFigureTextMetadataAndLayout(t *testing.T) {
	cmp := NewComparison(fixtureRuns())
	ch, _ := cmp.Chart("epoch-vs-mem", "")
	meta := FigureMeta{Experiment: 42, Version: "devel+abc1234", Host: "bench-host"}
	for _, size := range FigureSizes {
		var pdf, svg bytes.Buffer
		if err := RenderFigureWith(ch, FigurePDF, &pdf, FigureOptions{Size: size, Meta: meta}); err != nil {
			t.Fatal(err)
		}
		if err := RenderFigureWith(ch, FigureSVG, &svg, FigureOptions{Size: size, Meta: meta}); err != nil {
			t.Fatal(err)
		}
		txt, err := PDFText(pdf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"mean ± 1 s.d.", "Epoch time vs memory limit", "experiment 42", "outcore devel+abc1234", "host bench-host", "256MiB"} {
			if !strings.Contains(txt, want) {
				t.Errorf("%s PDF text lacks %q:\n%s", size, want, txt)
			}
		}
		if strings.Contains(txt, "Â") {
			t.Errorf("%s PDF text has mojibake: %q", size, txt)
		}
		checkXref(t, pdf.Bytes())
		dec := xml.NewDecoder(bytes.NewReader(svg.Bytes()))
		var w, h, desc string
		inDesc := false
		for {
			tok, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s SVG does not parse: %v", size, err)
			}
			switch el := tok.(type) {
			case xml.StartElement:
				if el.Name.Local == "svg" {
					for _, a := range el.Attr {
						switch a.Name.Local {
						case "width":
							w = a.Value
						case "height":
							h = a.Value
						}
					}
				}
				inDesc = el.Name.Local == "desc"
			case xml.CharData:
				if inDesc {
					desc += string(el)
				}
			case xml.EndElement:
				inDesc = false
			}
		}
		wantW := map[string]string{SizeWide: "515.52pt", SizeColumn: "252pt"}[size]
		if w != wantW || h == "" {
			t.Errorf("%s SVG is %s × %s, want width %s", size, w, h, wantW)
		}
		if !strings.Contains(desc, "experiment 42") || !strings.Contains(desc, "devel+abc1234") || !strings.Contains(desc, "bench-host") {
			t.Errorf("%s SVG desc %q", size, desc)
		}
		if !strings.Contains(svg.String(), "sans-serif") || strings.Contains(svg.String(), "Liberation Serif") {
			t.Errorf("%s SVG is not set in a sans-serif font", size)
		}
	}
}

// checkXref checks that every in-use xref entry of a PDF points at its object.
func checkXref(t *testing.T, pdf []byte) {
	t.Helper()
	x := bytes.LastIndex(pdf, []byte("\nxref\n"))
	var first, n int
	fmt.Sscanf(string(pdf[x+6:]), "%d %d", &first, &n)
	p := x + 6 + bytes.IndexByte(pdf[x+6:], '\n') + 1
	for i := 0; i < n; i++ {
		e := string(pdf[p : p+20])
		p += 20
		if e[17] != 'n' {
			continue
		}
		off, _ := strconv.Atoi(e[:10])
		if want := fmt.Sprintf("%d 0 obj", first+i); !bytes.HasPrefix(pdf[off:], []byte(want)) {
			t.Errorf("xref entry %d points at %q", first+i, pdf[off:min(len(pdf), off+12)])
		}
	}
	var start int
	fmt.Sscanf(string(pdf[bytes.LastIndex(pdf, []byte("startxref"))+10:]), "%d", &start)
	if start != x+1 {
		t.Errorf("startxref %d, xref at %d", start, x+1)
	}
}

func TestNiceTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		bytes  bool
		want   string
	}{
		{0, 5.2, false, "0 1 2 3 4 5"},
		{0, 0.78, false, "0 0.1 0.2 0.3 0.4 0.5 0.6 0.7"},
		{0, 0.72, false, "0 0.1 0.2 0.3 0.4 0.5 0.6 0.7"},
		{0, 13, false, "0 2 4 6 8 10 12"},
		{0, 2600, false, "0 500 1000 1500 2000 2500"},
		{0, 1.1, false, "0 0.2 0.4 0.6 0.8 1"},
		{0, 3 << 20, true, "0 512KiB 1MiB 1.5MiB 2MiB 2.5MiB 3MiB"},
	} {
		var got []string
		for _, tk := range (niceTicks{bytes: c.bytes}).Ticks(c.lo, c.hi) {
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		if g := strings.Join(got, " "); g != c.want {
			t.Errorf("ticks of [%v, %v] = %q, want %q", c.lo, c.hi, g, c.want)
		}
	}
	// A log₂ memory axis labels the grid's limits.
	var got []string
	for _, tk := range (valueTicks{values: []float64{256 << 20, 512 << 20, 1 << 30}, bytes: true}).Ticks(100<<20, 2<<30) {
		got = append(got, tk.Label)
	}
	if g := strings.Join(got, " "); g != "256MiB 512MiB 1GiB" {
		t.Errorf("log axis ticks %q", g)
	}
}

func TestWrapTextFits(t *testing.T) {
	sty := text.Style{Font: font.From(figureFont, vg.Points(8)), Handler: plot.DefaultTextHandler}
	long := figureSubtitle(Chart{Kind: "stack", Series: []Series{{Points: []Point{{Status: StatusOOM}, {Status: StatusCancelled}}}}})
	w := 2 * vg.Inch
	lines := wrapText(sty, long, w)
	if len(lines) < 2 {
		t.Fatalf("%q not wrapped: %q", long, lines)
	}
	for _, l := range lines {
		if sty.Width(l) > w {
			t.Errorf("line %q is %v wide, more than %v", l, sty.Width(l), w)
		}
	}
	if strings.Join(lines, " ") != long {
		t.Errorf("wrapping lost words: %q", lines)
	}
}
