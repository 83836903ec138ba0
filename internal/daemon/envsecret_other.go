//go:build !unix

package daemon

// HideEnvSecrets does nothing where there is no exec (Windows): there
// token.TakeEnvSecret's os.Unsetenv changes the process's environment block
// itself, which is what a child or another process would read.
func HideEnvSecrets() error { return nil }
