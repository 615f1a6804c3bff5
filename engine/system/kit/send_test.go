package kit

import (
	"context"
	"testing"
)

func TestSend(t *testing.T) {
	ch := make(chan int, 1)
	if !Send(context.Background(), ch, 7) || <-ch != 7 {
		t.Fatal("a send with room was not delivered")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	full := make(chan int) // no receiver: only the cancelled context can end the send
	if Send(ctx, full, 1) {
		t.Fatal("a send with no receiver reported delivered after the context was done")
	}
}
