// Command outcore trains graph neural networks on graphs whose features live
// on an SSD, with the disk-based systems of five papers as variants, and
// serves a dashboard to run and compare them. The commands live in
// cmd/outcore/cli; main.go only wires the process to them.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"outcore/cmd/outcore/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
