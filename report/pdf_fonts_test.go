package report

import (
	"bytes"
	"strings"
	"testing"
)

// A figure PDF names the standard Helvetica font instead of embedding a
// 219 KB Liberation Sans in every file, and stays a well-formed PDF: every
// cross-reference offset points at its object, and its text reads back.
func TestFigurePDFUsesAStandardFont(t *testing.T) {
	cmp := NewComparison(fixtureRuns())
	for _, id := range []string{"epoch-vs-mem", "stages", "accuracy"} {
		ch, _ := cmp.Chart(id, "")
		var b bytes.Buffer
		if err := WriteChart(&b, ch, FigurePDF); err != nil {
			t.Fatal(err)
		}
		pdf := b.Bytes()
		if len(pdf) > 40<<10 {
			t.Errorf("%s: %d bytes: a font is still embedded?", id, len(pdf))
		}
		for _, bad := range []string{"FontFile", "Liberation", "/TrueType"} {
			if bytes.Contains(pdf, []byte(bad)) {
				t.Errorf("%s: the PDF still has %s", id, bad)
			}
		}
		if !bytes.Contains(pdf, []byte("/BaseFont /Helvetica")) || !bytes.Contains(pdf, []byte("/Encoding /WinAnsiEncoding")) {
			t.Errorf("%s: no standard Helvetica font with its encoding", id)
		}
		checkXref(t, pdf)
		text, err := PDFText(pdf)
		if err != nil || !strings.Contains(text, ch.Title) {
			t.Errorf("%s: text %q, %v", id, text, err)
		}
	}
}
