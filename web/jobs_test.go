package web

import "testing"

func TestProgressWriterParsesStatusLines(t *testing.T) {
	var pcts []float64
	var msgs []string
	pw := &progressWriter{set: func(p float64, m string) { pcts, msgs = append(pcts, p), append(msgs, m) }}
	pw.Write([]byte("\rgenerating x:  12.5%  100/800 nodes\rgenerating x: 100.0%  800/800"))
	pw.Write([]byte(" nodes\nsorting 42 edges by destination…\n"))
	if len(pcts) != 3 || pcts[0] != 12.5 || pcts[1] != 100 || pcts[2] != -1 {
		t.Fatalf("percentages %v (messages %q)", pcts, msgs)
	}
	if msgs[1] != "generating x: 100.0%  800/800 nodes" {
		t.Errorf("message %q", msgs[1])
	}
}
