// Command outcore trains graph neural networks on graphs whose features live
// on an SSD, with the disk-based systems of five papers as variants, and
// serves a dashboard to run and compare them. main.go only dispatches.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"outcore/internal/cli"
)

var commands = []cli.Command{
	{Name: "data", Summary: "generate, import, inspect and verify datasets", Run: cli.Data},
	{Name: "train", Summary: "train one model with one system variant", Run: cli.Train},
	{Name: "systems", Summary: "list the system variants and their options", Run: cli.Systems},
	{Name: "bench", Summary: "micro-benchmarks (bench io)", Run: cli.Bench},
	{Name: "exp", Summary: "create, list, show and export experiments", Run: cli.Exp},
	{Name: "serve", Summary: "serve the experiment dashboard", Run: cli.Serve},
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: outcore <command> [flags]\n\ncommands:")
	for _, c := range commands {
		fmt.Fprintf(os.Stderr, "  %-7s %s\n", c.Name, c.Summary)
	}
	fmt.Fprintln(os.Stderr, "\nRun 'outcore <command> -h' for a command's flags.")
}

func main() {
	if len(os.Args) < 2 || os.Args[1] == "-h" || os.Args[1] == "--help" || os.Args[1] == "help" {
		usage()
		if len(os.Args) < 2 {
			os.Exit(2)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	for _, c := range commands {
		if c.Name != os.Args[1] {
			continue
		}
		if err := c.Run(ctx, os.Args[2:]); err != nil {
			fmt.Fprintf(os.Stderr, "outcore %s: %v\n", c.Name, err)
			if errors.Is(err, cli.ErrUsage) {
				os.Exit(2)
			}
			os.Exit(1)
		}
		return
	}
	fmt.Fprintf(os.Stderr, "outcore: unknown command %q\n", os.Args[1])
	usage()
	os.Exit(2)
}
