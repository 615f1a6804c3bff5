package cli

import (
	"context"
	"errors"
)

// Exp runs `outcore exp`.
func Exp(ctx context.Context, args []string) error {
	return errors.New("exp: not implemented yet")
}
