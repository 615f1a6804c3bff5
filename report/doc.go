// Package report turns an experiment's runs into what people read: the
// comparison views of DESIGN §6 as chart models (compare.go, runcharts.go),
// the accuracy table, run digests (digest.go), tidy CSV (csv.go) and
// publication figures in SVG or PDF drawn with gonum/plot (figure.go).
//
// It reads the experiment store through Source (load.go) and writes to any
// io.Writer; it knows nothing of HTTP. The dashboard (web/) serves its
// charts as JSON, CSV and figures, and `outcore exp export --figure`
// (internal/cli) writes the same files from a terminal.
package report
