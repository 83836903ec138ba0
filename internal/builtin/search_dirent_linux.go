//go:build linux

package builtin

import (
	"encoding/binary"
	"io/fs"
	"os"
	"syscall"
	"unsafe"
)

// readDirEntries lists the directory f (opened through root) with the
// entry types that getdents64 reports. (*os.File).ReadDir would do the
// same, except that for a file opened in an os.Root it also lstats every
// entry, which cost a sixth of a search's time. An entry whose type the
// file system does not report (DT_UNKNOWN) is lstat'ed through root.
func readDirEntries(f *os.File, root *os.Root, buf []byte) ([]dirEntry, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	const (
		offReclen = unsafe.Offsetof(syscall.Dirent{}.Reclen)
		offType   = unsafe.Offsetof(syscall.Dirent{}.Type)
		offName   = unsafe.Offsetof(syscall.Dirent{}.Name)
	)
	var out []dirEntry
	for {
		var n int
		var rerr error
		if err := rc.Read(func(fd uintptr) bool {
			n, rerr = syscall.ReadDirent(int(fd), buf)
			return true
		}); err != nil {
			return out, err
		}
		if rerr == syscall.EINTR {
			continue
		}
		if rerr != nil {
			return out, rerr
		}
		if n <= 0 {
			return out, nil
		}
		for rec := buf[:n]; len(rec) > int(offName); {
			reclen := int(binary.NativeEndian.Uint16(rec[offReclen:]))
			if reclen <= int(offName) || reclen > len(rec) {
				break
			}
			name := rec[offName:reclen]
			for i, c := range name {
				if c == 0 {
					name = name[:i]
					break
				}
			}
			typ := rec[offType]
			rec = rec[reclen:]
			if string(name) == "." || string(name) == ".." {
				continue
			}
			e := dirEntry{name: string(name)}
			switch typ {
			case syscall.DT_REG:
				e.typ = 0
			case syscall.DT_DIR:
				e.typ = fs.ModeDir
			case syscall.DT_LNK:
				e.typ = fs.ModeSymlink
			case syscall.DT_FIFO:
				e.typ = fs.ModeNamedPipe
			case syscall.DT_SOCK:
				e.typ = fs.ModeSocket
			case syscall.DT_CHR:
				e.typ = fs.ModeDevice | fs.ModeCharDevice
			case syscall.DT_BLK:
				e.typ = fs.ModeDevice
			default:
				fi, err := root.Lstat(e.name)
				if err != nil {
					continue // vanished since it was listed
				}
				e.typ = fi.Mode().Type()
			}
			out = append(out, e)
		}
	}
}
