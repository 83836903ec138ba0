//go:build !unix

package token

import "io/fs"

// checkPrivate checks nothing on Windows, where a file's mode says only
// whether it is read-only and os.FileInfo carries no owner. What protects the
// key there is its access list: clawd creates the key file, and the data
// directory when it creates that, readable by the current user only
// (fileutil.MakePrivate). A key file that someone else created, or whose
// access list was widened later, is not detected (docs/platforms.md).
func checkPrivate(fs.FileInfo) error { return nil }
