package rawio

import (
	"os"
	"testing"
)

// Memory and local disks are local; /proc (a kernel file system that is
// not a disk) is not, as a network file system would not be.
func TestLocalDisk(t *testing.T) {
	for _, c := range []struct {
		path string
		want bool
	}{
		{"/dev/shm", true}, // tmpfs
		{"/proc/self/stat", false},
	} {
		f, err := os.Open(c.path)
		if err != nil {
			t.Logf("skipping %s: %v", c.path, err)
			continue
		}
		if got := LocalDisk(f); got != c.want {
			t.Errorf("LocalDisk(%s) = %v, want %v", c.path, got, c.want)
		}
		f.Close()
	}
}
