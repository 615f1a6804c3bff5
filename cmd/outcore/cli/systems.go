package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"outcore/engine/train"
)

// systemJSON is one variant in `outcore systems --json`.
type systemJSON struct {
	Name    string         `json:"name"`
	Paper   string         `json:"paper"`
	Summary string         `json:"summary"`
	Options []train.Option `json:"options"`
}

// systemsCmd is `outcore systems`.
func systemsCmd() *Command {
	var asJSON bool
	fs := newFlagSet("systems", nil)
	fs.BoolVar(&asJSON, "json", false, "print JSON instead of text")
	return &Command{
		Name:  "systems",
		Args:  "[--json]",
		Short: "list the system variants and their options",
		Long: `Lists the training-system variants this binary has registered
(engine/train.Variants, in display order): name, paper, what each does, and
the options it reads (` + "`outcore train --opt key=value`" + `). --json prints
[{"name","paper","summary","options":[{"key","type","default","help"}]}].`,
		Flags: fs,
		Exec: func(ctx context.Context, s Streams, _ []string) error {
			return systems(s.Out, asJSON)
		},
	}
}

func systems(stdout io.Writer, asJSON bool) error {
	vs := train.Variants()
	if asJSON {
		out := make([]systemJSON, len(vs))
		for i, v := range vs {
			out[i] = systemJSON{Name: v.Name, Paper: v.Paper, Summary: v.Summary, Options: v.Options}
			if out[i].Options == nil {
				out[i].Options = []train.Option{}
			}
		}
		return writeJSON(stdout, out)
	}
	for i, v := range vs {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		fmt.Fprintf(stdout, "%s — %s\n", v.Name, v.Summary)
		if v.Paper != "" {
			fmt.Fprintf(stdout, "  paper: %s\n", v.Paper)
		}
		if len(v.Options) == 0 {
			fmt.Fprintln(stdout, "  options: none")
			continue
		}
		fmt.Fprintln(stdout, "  options:")
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		for _, o := range v.Options {
			typ := o.Type
			if o.Type == train.OptEnum {
				typ = strings.Join(o.Values, "|")
			}
			fmt.Fprintf(tw, "    %s\t%s\t(default %s)\t%s\n", o.Key, typ, o.Default, o.Help)
		}
		tw.Flush()
	}
	return nil
}

// paperSystems are the names of the registered variants of a paper (the
// reference pipeline left out), in display order, for examples in usage
// texts and grids.
func paperSystems() []string {
	var out []string
	for _, v := range train.Variants() {
		if v.Paper != "" && v.Name != train.ReferenceName {
			out = append(out, v.Name)
		}
	}
	return out
}

// withSystems fills a usage text's {{systems}} with the quoted names of
// paperSystems ("a", "b").
func withSystems(usage string) string {
	names := paperSystems()
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.ReplaceAll(usage, "{{systems}}", strings.Join(q, ", "))
}
