package cli

import (
	"context"
	"errors"
)

// Bench runs `outcore bench`.
func Bench(ctx context.Context, args []string) error {
	return errors.New("bench: not implemented yet")
}
