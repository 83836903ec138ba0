package fileutil

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWriteAtomicSyncsTheDirectory: the rename that publishes the new
// content is itself made durable (the directory is synced after it), so a
// crash right after WriteAtomic returns cannot bring back the old file;
// WriteAtomicVolatile skips it like the file's own sync.
func TestWriteAtomicSyncsTheDirectory(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	var synced []string
	orig := syncDir
	syncDir = func(d string) {
		if b, err := os.ReadFile(p); err != nil || string(b) != "new" {
			t.Errorf("directory synced before the rename: %q %v", b, err)
		}
		synced = append(synced, d)
	}
	defer func() { syncDir = orig }()
	if err := WriteAtomic(p, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	if len(synced) != 1 || synced[0] != dir {
		t.Fatalf("synced %v, want [%s]", synced, dir)
	}
	if err := WriteAtomicVolatile(p, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	if len(synced) != 1 {
		t.Fatalf("WriteAtomicVolatile synced the directory: %v", synced)
	}
}
