//go:build !unix

package token

import "io/fs"

// checkPrivate has no portable mode or owner check outside unix; there the
// ACL inherited from the per-user data directory protects the file.
func checkPrivate(fs.FileInfo) error { return nil }
