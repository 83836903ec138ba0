package rawio

import (
	"os"

	"golang.org/x/sys/unix"
)

// localDisks are the file systems whose buffered writes Append may make
// raw: ext2-4 and XFS on a disk, memory, and overlayfs (a container's
// root, over one of those as a rule). A network or user-space file system
// (NFS, SMB, FUSE, 9p, virtiofs) can keep a write waiting for a server, and
// a raw write would hold a processor that long. Btrfs, F2FS, ZFS and
// bcachefs are left out too: they keep a page stable while it is written
// back (for its checksum, compression or encryption) or throttle writes on
// purpose, so an append to the journal's last page can wait for the disk;
// there the journal's appends are os.File's.
var localDisks = map[int64]bool{
	unix.EXT4_SUPER_MAGIC:      true, // ext2, ext3 and ext4 share it
	unix.XFS_SUPER_MAGIC:       true,
	unix.TMPFS_MAGIC:           true,
	unix.OVERLAYFS_SUPER_MAGIC: true,
}

// LocalDisk reports whether f lives on a local file system or in memory,
// where a short buffered write waits for no server: Append may write it
// raw. It can still wait: for the kernel's throttling of dirty pages, for
// a block device that is itself remote (a cloud volume, iSCSI) or that
// asks for stable pages; the type alone cannot tell those apart. Overlayfs
// reports its own type whatever its upper layer is.
func LocalDisk(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	var st unix.Statfs_t
	if rc.Control(func(fd uintptr) { err = unix.Fstatfs(int(fd), &st) }) != nil || err != nil {
		return false
	}
	return localDisks[int64(st.Type)]
}
