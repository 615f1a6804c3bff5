package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"outcore/engine/dataset"
)

// dataDigestCmd is `outcore data digest NAME [--check SHA256]`: the digest
// a cluster job checks on its node before training (docs/ARCHITECTURE.md
// "Datasets on a cluster").
func dataDigestCmd() *Command {
	var check string
	var noCache bool
	cmd := datasetCmd("digest", "NAME [--check SHA256] [--no-cache] [--json]", "SHA-256 of a dataset's binary files",
		func(fs *flag.FlagSet) {
			fs.StringVar(&check, "check", "", "fail unless the digest is this SHA-256 (hex)")
			fs.BoolVar(&noCache, "no-cache", false, "hash every file even when the cached digest's file sizes and times still match")
		},
		func(s Streams, dir, name string, asJSON bool) error {
			var sum string
			var err error
			if check != "" {
				sum = check
				err = dataset.CheckDigest(dir, check, !noCache)
			} else {
				sum, err = dataset.Digest(dir, !noCache)
			}
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(s.Out, map[string]string{"dataset": name, "sha256": sum})
			}
			if check != "" {
				fmt.Fprintf(s.Out, "%s  %s (as expected)\n", sum, name)
			} else {
				fmt.Fprintf(s.Out, "%s  %s\n", sum, name)
			}
			return nil
		})
	cmd.Long = "Prints the SHA-256 of the dataset's binary files (name, size and bytes of each; meta.json\n" +
		"excluded, so identical copies made at different times agree). The digest is cached in the\n" +
		"dataset's " + dataset.DigestFile + " and reused while no file's size or modification time changed."
	return cmd
}

// genLike returns the generator configuration of the dataset a meta.json
// describes, and sets the preset and (when not given) the name from it.
func genLike(metaPath string, preset, name *string) (dataset.GenConfig, error) {
	b, err := os.ReadFile(metaPath)
	if err != nil {
		return dataset.GenConfig{}, usagef("--like: %v", err)
	}
	var m dataset.Meta
	if err := json.Unmarshal(b, &m); err != nil {
		return dataset.GenConfig{}, usagef("--like %s: not a dataset meta.json: %v", metaPath, err)
	}
	if m.Source.Kind != "generator" || m.Source.Generator == nil {
		return dataset.GenConfig{}, usagef("--like %s: dataset %q was not generated (source %q); copy it instead",
			filepath.Base(filepath.Dir(metaPath)), m.Name, m.Source.Kind)
	}
	if m.Source.Preset != "" {
		*preset = m.Source.Preset
	}
	if *name == "" {
		*name = m.Name
	}
	if *name == "" {
		return dataset.GenConfig{}, usagef("--like: the meta.json names no dataset; give --name")
	}
	return *m.Source.Generator, nil
}
