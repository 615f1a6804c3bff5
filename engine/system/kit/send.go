package kit

import "context"

// Send sends v on ch unless ctx is done first; it reports whether v was
// sent (false: the pipeline stops, the stage returns).
func Send[T any](ctx context.Context, ch chan<- T, v T) bool {
	select {
	case ch <- v:
		return true
	case <-ctx.Done():
		return false
	}
}
