package report

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// PDFText reads back the text a figure PDF draws (the string operands of
// its content streams, FlateDecode or plain, decoded from Windows-1252)
// and its document information, one string per line. It reads the PDFs
// RenderFigure writes, not PDF in general; tests and the bundle's checks
// use it to see what a reader of the figure sees.
func PDFText(pdf []byte) (string, error) {
	if !bytes.HasPrefix(pdf, []byte("%PDF-")) {
		return "", fmt.Errorf("not a PDF")
	}
	var out []string
	rest := pdf
	for {
		i := bytes.Index(rest, []byte("stream"))
		if i < 0 {
			break
		}
		// "endstream" also contains "stream": skip those.
		if i >= 3 && string(rest[i-3:i]) == "end" {
			rest = rest[i+6:]
			continue
		}
		dict := rest[max(0, bytes.LastIndex(rest[:i], []byte("obj"))):i]
		body := rest[i+6:]
		body = bytes.TrimPrefix(body, []byte("\r"))
		body = bytes.TrimPrefix(body, []byte("\n"))
		end := bytes.Index(body, []byte("endstream"))
		if end < 0 {
			return "", fmt.Errorf("unterminated stream")
		}
		data := body[:end]
		rest = body[end+9:]
		if bytes.Contains(dict, []byte("/FlateDecode")) {
			zr, err := zlib.NewReader(bytes.NewReader(data))
			if err != nil {
				continue // a font or image stream we cannot read: not text
			}
			dec, err := io.ReadAll(zr)
			if err != nil {
				continue
			}
			data = dec
		}
		if bytes.Contains(dict, []byte("/Length1")) || !bytes.Contains(data, []byte("Tj")) {
			continue // an embedded font, or no text
		}
		out = append(out, pdfStrings(data)...)
	}
	for _, m := range pdfInfoRE.FindAllSubmatch(pdf, -1) {
		out = append(out, string(m[1])+": "+FromCP1252(unescapePDF(m[2])))
	}
	return strings.Join(out, "\n"), nil
}

var pdfInfoRE = regexp.MustCompile(`/(Title|Subject|Keywords|Creator|Producer) \(((?:\\.|[^\\)])*)\)`)

// pdfStrings are the literal strings shown by Tj in a content stream.
func pdfStrings(data []byte) []string {
	var out []string
	for i := 0; i < len(data); i++ {
		if data[i] != '(' {
			continue
		}
		var lit []byte
		depth := 1
		j := i + 1
		for ; j < len(data) && depth > 0; j++ {
			switch c := data[j]; c {
			case '\\':
				if j+1 < len(data) {
					lit = append(lit, c, data[j+1])
					j++
				}
			case '(':
				depth++
				lit = append(lit, c)
			case ')':
				depth--
				if depth > 0 {
					lit = append(lit, c)
				}
			default:
				lit = append(lit, c)
			}
		}
		out = append(out, FromCP1252(unescapePDF(lit)))
		i = j - 1
	}
	return out
}

// unescapePDF undoes a literal string's escapes (\n, \(, \\, \ddd).
func unescapePDF(b []byte) []byte {
	var out []byte
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 == len(b) {
			out = append(out, b[i])
			continue
		}
		i++
		switch c := b[i]; {
		case c >= '0' && c <= '7':
			v := 0
			for k := 0; k < 3 && i < len(b) && b[i] >= '0' && b[i] <= '7'; k++ {
				v = v*8 + int(b[i]-'0')
				i++
			}
			i--
			out = append(out, byte(v))
		case c == 'n':
			out = append(out, '\n')
		case c == 'r':
			out = append(out, '\r')
		case c == 't':
			out = append(out, '\t')
		default:
			out = append(out, c)
		}
	}
	return out
}
