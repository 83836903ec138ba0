//go:build !unix

package chain

import "os"

// fileIDOf on systems without a portable inode and ctime keys on size and
// mtime only; the racy window in HashCache.Sum still applies.
func fileIDOf(fi os.FileInfo) fileID {
	return fileID{size: fi.Size(), mtime: fi.ModTime().UnixNano(), ctime: fi.ModTime().UnixNano()}
}
