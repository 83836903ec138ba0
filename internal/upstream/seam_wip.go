package upstream

import (
	"context"
	"errors"
)

// Placeholders so the seam compiles; replaced by the implementation.

type nameTable struct{}

type server struct{}

var errNotYet = errors.New("upstream: not implemented yet")

func (s *server) status() Status                      { return Status{} }
func (s *server) refresh(context.Context) error       { return errNotYet }
func (s *server) logs() []byte                        { return nil }
func (m *Manager) apply(context.Context, []ServerConfig) {}
func (m *Manager) test(context.Context, ServerConfig) (TestResult, error) {
	return TestResult{}, errNotYet
}
func (m *Manager) close(context.Context) error { return nil }
