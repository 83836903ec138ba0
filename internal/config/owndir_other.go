//go:build !unix

package config

import (
	"fmt"
	"os"
)

// checkOwnDir checks only that dir is a directory: outside unix the
// fallback lies in the per-user temp directory, and owners are ACLs this
// package does not read.
func checkOwnDir(dir string, fix bool) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("runtime directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("runtime directory %s is not a directory; remove it, or set XDG_RUNTIME_DIR", dir)
	}
	return nil
}
