//go:build !unix

package daemon

import "context"

// notifyRotate does nothing where there are no user signals: a restart of
// the daemon issues a new token (its pid and start time change).
func notifyRotate(ctx context.Context, rotate func()) (stop func()) { return func() {} }
