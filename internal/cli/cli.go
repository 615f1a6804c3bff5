// Package cli implements outcore's subcommands. main.go holds the command
// table; each file here implements one command group.
package cli

import (
	"context"
	"errors"

	// Every training-system variant registers itself with engine/train.
	_ "outcore/engine/system/all"
)

// ErrUsage marks an error caused by how a command was called; main prints
// the command's usage after it and exits with status 2.
var ErrUsage = errors.New("usage")

// Command is one top-level subcommand.
type Command struct {
	Name    string
	Summary string
	Run     func(ctx context.Context, args []string) error
}
