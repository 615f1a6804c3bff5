package cli

import (
	"context"
	"errors"
)

// Train runs `outcore train`.
func Train(ctx context.Context, args []string) error {
	return errors.New("train: not implemented yet")
}
