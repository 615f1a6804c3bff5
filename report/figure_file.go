package report

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"regexp"
	"strconv"
	"strings"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"
)

// The figure files: gonum draws them, this file makes them right for a
// paper. PDF: gonum's PDF fonts use the Windows-1252 code page but it
// writes Go's UTF-8 strings into them as bytes, so "±" came out as "Â±";
// text is translated to the code page before it is drawn (cp1252Canvas).
// SVG: the font is named with generic fallbacks so that a viewer without
// Liberation Sans still draws a sans-serif font. Both carry FigureMeta.

// figureCanvas is a canvas the figure is drawn on and written from.
type figureCanvas interface {
	vg.CanvasWriterTo
}

func newFigureCanvas(format string, w, h vg.Length) (figureCanvas, error) {
	switch format {
	case FigureSVG:
		return vgsvg.New(w, h), nil
	case FigurePDF:
		c := vgpdf.New(w, h)
		c.EmbedFonts(false) // a standard font instead (pdfStandardFonts)
		return cp1252Canvas{c}, nil
	}
	return nil, fmt.Errorf("figure format %q: want svg or pdf", format)
}

// cp1252Canvas is a PDF canvas whose text is translated to Windows-1252.
type cp1252Canvas struct{ *vgpdf.Canvas }

// FillString implements vg.Canvas.
func (c cp1252Canvas) FillString(f font.Face, pt vg.Point, s string) {
	c.Canvas.FillString(f, pt, CP1252(s))
}

// cp1252High are the Windows-1252 bytes 0x80–0x9F that are not Latin-1.
var cp1252High = map[rune]byte{
	'€': 0x80, '‚': 0x82, 'ƒ': 0x83, '„': 0x84, '…': 0x85, '†': 0x86, '‡': 0x87, 'ˆ': 0x88, '‰': 0x89,
	'Š': 0x8A, '‹': 0x8B, 'Œ': 0x8C, 'Ž': 0x8E, '‘': 0x91, '’': 0x92, '“': 0x93, '”': 0x94, '•': 0x95,
	'–': 0x96, '—': 0x97, '˜': 0x98, '™': 0x99, 'š': 0x9A, '›': 0x9B, 'œ': 0x9C, 'ž': 0x9E, 'Ÿ': 0x9F,
}

// cp1252Subst stands in for characters the code page lacks.
var cp1252Subst = map[rune]string{'₂': "2", '≥': ">=", '≤': "<=", '✕': "x", '→': "->", '≈': "~", '−': "-", 'ₙ': "n"}

// CP1252 encodes s in Windows-1252 (the PDF fonts' code page), writing
// characters it lacks as ASCII stand-ins or "?".
func CP1252(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < 0x80 || (r >= 0xA0 && r <= 0xFF):
			b.WriteByte(byte(r))
		case cp1252High[r] != 0:
			b.WriteByte(cp1252High[r])
		case cp1252Subst[r] != "":
			b.WriteString(cp1252Subst[r])
		default:
			b.WriteByte('?')
		}
	}
	return b.String()
}

// FromCP1252 decodes Windows-1252 bytes (what a PDF figure's text holds).
func FromCP1252(b []byte) string {
	high := map[byte]rune{}
	for r, c := range cp1252High {
		high[c] = r
	}
	var sb strings.Builder
	for _, c := range b {
		if r, ok := high[c]; ok {
			sb.WriteRune(r)
		} else {
			sb.WriteRune(rune(c))
		}
	}
	return sb.String()
}

// metaText is a figure's provenance in one line.
func metaText(ch Chart, m FigureMeta) string {
	parts := []string{"chart " + ch.ID}
	if m.Experiment > 0 {
		parts = append(parts, fmt.Sprintf("experiment %d", m.Experiment))
	}
	if m.Run > 0 {
		parts = append(parts, fmt.Sprintf("run %d", m.Run))
	}
	if m.Version != "" {
		parts = append(parts, "outcore "+m.Version)
	}
	if m.Host != "" {
		parts = append(parts, "host "+m.Host)
	}
	return strings.Join(parts, "; ")
}

// svgFontRE finds the font families gonum writes.
var svgFontRE = regexp.MustCompile(`font-family:Liberation Sans;`)

// writeFigure writes the drawn canvas with its metadata.
func writeFigure(cw figureCanvas, format string, w io.Writer, ch Chart, m FigureMeta) error {
	var buf bytes.Buffer
	if _, err := cw.WriteTo(&buf); err != nil {
		return err
	}
	out := buf.Bytes()
	switch format {
	case FigureSVG:
		out = svgFontRE.ReplaceAll(out, []byte(`font-family:'Liberation Sans',Arial,Helvetica,sans-serif;`))
		i := bytes.Index(out, []byte("<svg"))
		if i < 0 {
			return fmt.Errorf("no <svg> element")
		}
		j := bytes.IndexByte(out[i:], '>')
		if j < 0 {
			return fmt.Errorf("unterminated <svg> element")
		}
		at := i + j + 1
		meta := fmt.Sprintf("\n<title>%s</title>\n<desc>%s</desc>\n<metadata id=\"outcore\">%s</metadata>\n",
			html.EscapeString(ch.Title), html.EscapeString(metaText(ch, m)), html.EscapeString(metaJSON(ch, m)))
		out = append(out[:at:at], append([]byte(meta), out[at:]...)...)
	case FigurePDF:
		var err error
		out = pdfStandardFonts(out)
		out, err = pdfAddInfo(out, map[string]string{
			"Title": ch.Title, "Subject": metaText(ch, m), "Keywords": metaJSON(ch, m), "Creator": "outcore " + m.Version,
		})
		if err != nil {
			return err
		}
	}
	_, err := w.Write(out)
	return err
}

// pdfFontNames map gonum's Liberation Sans faces to the PDF standard
// fonts they are metric-compatible with (longest name first).
var pdfFontNames = [][2]string{
	{"/LiberationSans-BoldItalic", "/Helvetica-BoldOblique"},
	{"/LiberationSans-Italic", "/Helvetica-Oblique"},
	{"/LiberationSans-Bold", "/Helvetica-Bold"},
	{"/LiberationSans", "/Helvetica"},
}

// pdfStandardFonts names the fonts of a PDF written without embedded
// fonts as the standard Helvetica faces, which every PDF reader has:
// Liberation Sans has Helvetica's metrics, so the widths gonum laid the
// text out with hold, and each figure is a few KiB instead of carrying a
// 219 KB font. Names are padded with spaces to their old length, so the
// cross-reference offsets stay right.
func pdfStandardFonts(pdf []byte) []byte {
	// not embedded: no font file (gofpdf refers to object 0), and a
	// standard font is a Type1 font
	for _, r := range [][2]string{{"/FontFile2 0 0 R", ""}, {"/Subtype /TrueType", "/Subtype /Type1"}} {
		pad := r[1] + strings.Repeat(" ", len(r[0])-len(r[1]))
		pdf = bytes.ReplaceAll(pdf, []byte(r[0]), []byte(pad))
	}
	for _, n := range pdfFontNames {
		old, std := []byte(n[0]), []byte(n[1])
		for _, sep := range []byte{' ', '\n', '/', '>', '\r'} {
			pad := append(append([]byte{}, std...), bytes.Repeat([]byte{' '}, len(old)-len(std))...)
			pdf = bytes.ReplaceAll(pdf, append(append([]byte{}, old...), sep), append(pad, sep))
		}
	}
	return pdf
}

// metaJSON is the metadata as a small JSON object.
func metaJSON(ch Chart, m FigureMeta) string {
	return fmt.Sprintf(`{"chart":%q,"experiment":%d,"run":%d,"version":%q,"host":%q}`, ch.ID, m.Experiment, m.Run, m.Version, m.Host)
}

// pdfString writes s as a PDF literal string in Windows-1252.
func pdfString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `(`, `\(`, `)`, `\)`, "\r", " ", "\n", " ")
	return "(" + r.Replace(CP1252(s)) + ")"
}

var startxrefRE = regexp.MustCompile(`startxref\s+(\d+)`)

// pdfAddInfo adds entries to the document information dictionary of a PDF
// written by gofpdf (its /Producer entry opens the dictionary) and moves
// the cross-reference offsets of everything after it.
func pdfAddInfo(pdf []byte, info map[string]string) ([]byte, error) {
	at := bytes.Index(pdf, []byte("/Producer "))
	if at < 0 {
		return nil, fmt.Errorf("pdf: no document information dictionary")
	}
	var add strings.Builder
	for _, k := range []string{"Title", "Subject", "Keywords", "Creator"} {
		if v, ok := info[k]; ok && v != "" {
			fmt.Fprintf(&add, "/%s %s\n", k, pdfString(v))
		}
	}
	ins := []byte(add.String())
	delta := len(ins)
	out := make([]byte, 0, len(pdf)+delta)
	out = append(out, pdf[:at]...)
	out = append(out, ins...)
	out = append(out, pdf[at:]...)
	// The xref table: "xref\n0 N\n" then N entries "oooooooooo ggggg n \n".
	x := bytes.LastIndex(out, []byte("\nxref\n"))
	if x < 0 {
		return nil, fmt.Errorf("pdf: no xref table")
	}
	p := x + len("\nxref\n")
	nl := bytes.IndexByte(out[p:], '\n')
	if nl < 0 {
		return nil, fmt.Errorf("pdf: bad xref header")
	}
	var first, n int
	if _, err := fmt.Sscanf(string(out[p:p+nl]), "%d %d", &first, &n); err != nil {
		return nil, fmt.Errorf("pdf: xref header %q: %w", out[p:p+nl], err)
	}
	p += nl + 1
	for i := 0; i < n; i++ {
		e := out[p : p+20]
		off, err := strconv.Atoi(string(e[:10]))
		if err != nil {
			return nil, fmt.Errorf("pdf: xref entry %q: %w", e, err)
		}
		if e[17] == 'n' && off > at {
			copy(e[:10], fmt.Sprintf("%010d", off+delta))
		}
		p += 20
	}
	m := startxrefRE.FindSubmatchIndex(out[x:])
	if m == nil {
		return nil, fmt.Errorf("pdf: no startxref")
	}
	old, _ := strconv.Atoi(string(out[x+m[2] : x+m[3]]))
	fixed := append([]byte(nil), out[:x+m[2]]...)
	fixed = append(fixed, strconv.Itoa(old+delta)...)
	fixed = append(fixed, out[x+m[3]:]...)
	return fixed, nil
}
