package cli

import (
	"context"
	"errors"
)

// Serve runs `outcore serve`.
func Serve(ctx context.Context, args []string) error {
	return errors.New("serve: not implemented yet")
}
