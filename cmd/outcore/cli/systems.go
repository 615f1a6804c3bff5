package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"outcore/engine/dataset"
	"outcore/engine/train"
	"outcore/experiments/external"
)

// systemJSON is one variant in `outcore systems --json`.
type systemJSON struct {
	Name     string         `json:"name"`
	Paper    string         `json:"paper"`
	Summary  string         `json:"summary"`
	Options  []train.Option `json:"options"`
	External bool           `json:"external,omitempty"`
}

// systemsFlagHelp is the help of --systems (serve, exp create, systems).
const systemsFlagHelp = "the external systems' registry file (DESIGN §14; default <data dir>/systems.json, none when absent)"

// loadSystems loads the external systems' registry: file, or
// <dataDir>/systems.json when file is "" (absent: none).
func loadSystems(dataDir, file string) (*external.Registry, error) {
	if file != "" {
		r, err := external.Load(file)
		if err != nil {
			return nil, usagef("--systems: %v", err)
		}
		return r, nil
	}
	return external.LoadDefault(dataDir)
}

// externalSystems lists a registry's systems as `outcore systems` shows
// them: name "external:NAME", the options declared, sorted.
func externalSystems(reg *external.Registry) []systemJSON {
	var out []systemJSON
	for _, n := range reg.Names() {
		sys, _ := reg.Lookup(n)
		j := systemJSON{Name: external.Prefix + n, Summary: sys.Help, Options: []train.Option{}, External: true}
		keys := make([]string, 0, len(sys.Options))
		for k := range sys.Options {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			o := sys.Options[k]
			typ := o.Type
			if o.Type == external.TypeEnum {
				typ = strings.Join(o.Values, "|")
			} else if o.Min != nil {
				typ = fmt.Sprintf("%s %v..%v", o.Type, o.Min, o.Max)
			}
			j.Options = append(j.Options, train.Option{Key: k, Type: typ, Default: fmt.Sprint(o.Default), Help: o.Help})
		}
		out = append(out, j)
	}
	return out
}

// systemsCmd is `outcore systems`.
func systemsCmd() *Command {
	var asJSON bool
	var dataDir, systemsFile string
	fs := newFlagSet("systems", &dataDir)
	fs.BoolVar(&asJSON, "json", false, "print JSON instead of text")
	fs.StringVar(&systemsFile, "systems", "", systemsFlagHelp)
	return &Command{
		Name:  "systems",
		Args:  "[--json] [--data-dir DIR] [--systems FILE]",
		Short: "list the system variants and their options",
		Long: `Lists the training-system variants this binary has registered
(engine/train.Variants, in display order): name, paper, what each does, and
the options it reads (` + "`outcore train --opt key=value`" + `), then the
external systems the operator registered (<data dir>/systems.json or
--systems FILE; DESIGN §14), which grids name "external:NAME", with their
declared options. --json prints
[{"name","paper","summary","options":[{"key","type","default","help"}]}],
an external system with "external": true.`,
		Flags: fs,
		Exec: func(ctx context.Context, s Streams, _ []string) error {
			reg, err := loadSystems(dataset.ResolveDataDir(dataDir), systemsFile)
			if err != nil {
				return err
			}
			return systems(s.Out, asJSON, reg)
		},
	}
}

func systems(stdout io.Writer, asJSON bool, reg *external.Registry) error {
	vs := train.Variants()
	if asJSON {
		out := make([]systemJSON, len(vs))
		for i, v := range vs {
			out[i] = systemJSON{Name: v.Name, Paper: v.Paper, Summary: v.Summary, Options: v.Options}
			if out[i].Options == nil {
				out[i].Options = []train.Option{}
			}
		}
		return writeJSON(stdout, append(out, externalSystems(reg)...))
	}
	defer func() {
		for _, x := range externalSystems(reg) {
			fmt.Fprintf(stdout, "\n%s — external system (%s): %s\n", x.Name, reg.Path(), x.Summary)
			if len(x.Options) == 0 {
				fmt.Fprintln(stdout, "  options: none")
				continue
			}
			fmt.Fprintln(stdout, "  options:")
			tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
			for _, o := range x.Options {
				fmt.Fprintf(tw, "    %s\t%s\t(default %s)\t%s\n", o.Key, o.Type, o.Default, o.Help)
			}
			tw.Flush()
		}
	}()
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
