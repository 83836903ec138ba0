package fileutil

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestChangeTime: where it is read, the change time moves when a file is
// rewritten with the same size and its mtime set back, which is what the
// hash caches rely on to tell such a file from an untouched one.
func TestChangeTime(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	ct, ok := ChangeTime(before)
	if !ok {
		t.Skip("the change time is not read on this system")
	}
	if ct <= 0 {
		t.Fatalf("change time %d", ct)
	}
	time.Sleep(50 * time.Millisecond) // past the file system's clock tick
	if err := os.WriteFile(p, []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, before.ModTime(), before.ModTime()); err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime()) {
		t.Fatalf("setup: size or mtime differ (%d/%v, %d/%v)", before.Size(), before.ModTime(), after.Size(), after.ModTime())
	}
	if ct2, _ := ChangeTime(after); ct2 == ct {
		t.Fatalf("change time %d unchanged after a rewrite with the mtime restored", ct)
	}
}
