package cli

import (
	"context"
	"fmt"
	"runtime"

	"outcore/internal/version"
)

// versionCmd is `outcore version`.
func versionCmd() *Command {
	return &Command{
		Name:  "version",
		Args:  "",
		Short: "print outcore's version (-dirty when built from a modified tree)",
		Flags: newFlagSet("version", nil),
		Exec: func(ctx context.Context, s Streams, _ []string) error {
			fmt.Fprintf(s.Out, "outcore %s (%s %s/%s)\n", version.String(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
}
