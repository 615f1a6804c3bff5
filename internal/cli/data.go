package cli

import (
	"context"
	"errors"
)

// Data runs `outcore data`.
func Data(ctx context.Context, args []string) error {
	return errors.New("data: not implemented yet")
}
