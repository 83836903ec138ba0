package hostadapter

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// pathAdapter puts its entry under its own member of one shared file, as
// installs for different workspaces or clients put theirs into one config.
type pathAdapter struct{ file, member string }

func (p pathAdapter) Name() string                { return "test-" + p.member }
func (p pathAdapter) Kind() string                { return "local" }
func (p pathAdapter) Scopes() []Scope             { return []Scope{User} }
func (p pathAdapter) ProjectMarker(string) string { return "" }
func (p pathAdapter) Entry(o Options) (Entry, error) {
	return Entry{File: p.file, Path: []string{p.member}, Value: []byte(`{"command":"clawd"}`)}, nil
}

// Concurrent installs of different entries into one config each hold
// the lock from reading the file to writing it, so every entry lands and
// the backup is the original.
func TestConcurrentInstallsAllLand(t *testing.T) {
	dir := t.TempDir()
	lockDir := filepath.Join(dir, "data", "clawde")
	const n = 6
	for round := range 40 {
		file := filepath.Join(dir, fmt.Sprintf("config-%d.json", round))
		orig := []byte("{\n  \"other\": true\n}\n")
		if err := os.WriteFile(file, orig, 0o600); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				unlock, err := Lock(lockDir)
				if err != nil {
					errs <- err
					return
				}
				defer unlock()
				c, err := PlanInstall(pathAdapter{file, fmt.Sprintf("m%d", i)}, Options{Scope: User})
				if err == nil {
					err = Apply(c)
				}
				if err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		got, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if _, ok, _ := GetMember(got, []string{fmt.Sprintf("m%d", i)}, ServerName); !ok {
				t.Fatalf("round %d: entry m%d was lost:\n%s", round, i, got)
			}
		}
		if b, err := os.ReadFile(file + BackupSuffix); err != nil || string(b) != string(orig) {
			t.Fatalf("round %d: backup %q (%v), want the original", round, b, err)
		}
	}
	if st, err := os.Stat(filepath.Join(lockDir, LockName)); err != nil || (runtime.GOOS != "windows" && st.Mode().Perm()&0o077 != 0) {
		t.Errorf("lock file: %v %v", st, err)
	}
}

// A holder that does not let go makes the next one fail with a message
// naming the lock, not wait for ever.
func TestLockWaitIsBounded(t *testing.T) {
	dir := t.TempDir()
	unlock, err := Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock(dir, 50*time.Millisecond); err == nil || !strings.Contains(err.Error(), LockName) {
		t.Fatalf("a second lock while held: %v", err)
	}
	unlock()
	again, err := lock(dir, 50*time.Millisecond)
	if err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	again()
}
