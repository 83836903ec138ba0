package rawio

import (
	"os"

	"golang.org/x/sys/unix"
)

// localDisks are the file systems whose buffered writes Append may make
// raw: local disks and memory. A network or user-space file system
// (NFS, SMB, FUSE, 9p, virtiofs) can keep a write waiting for a server, and
// a raw write would hold a processor that long.
var localDisks = map[int64]bool{
	unix.EXT4_SUPER_MAGIC:      true, // ext2, ext3 and ext4 share it
	unix.XFS_SUPER_MAGIC:       true,
	unix.BTRFS_SUPER_MAGIC:     true,
	unix.F2FS_SUPER_MAGIC:      true,
	unix.TMPFS_MAGIC:           true,
	unix.OVERLAYFS_SUPER_MAGIC: true, // containers: the upper layer is a local disk
	0x2fc12fc1:                 true, // ZFS (not in x/sys)
	0xca451a4e:                 true, // bcachefs (not in x/sys)
}

// LocalDisk reports whether f lives on a local file system or in memory,
// where a short buffered write waits for no server: Append may write it
// raw. It can still wait: for the kernel's throttling of dirty pages, for
// a page under writeback where pages are kept stable (btrfs, ZFS), for
// ZFS's write throttle, for a block device that is itself remote (a cloud
// volume, iSCSI); the type alone cannot tell those apart. Overlayfs
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
