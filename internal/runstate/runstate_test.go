package runstate

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/clawde/clawd/internal/config"
)

func TestWriteReadRemove(t *testing.T) {
	dir := t.TempDir()
	p := Path(dir, "ws-1", TCP)
	if want := filepath.Join(dir, "run", "ws-1.tcp.json"); p != want {
		t.Fatalf("Path = %s, want %s", p, want)
	}
	st := &State{PID: 42, Transport: TCP, Addr: "127.0.0.1:7430", Workspace: "/w", WorkspaceID: "ws-1", Started: time.Unix(5, 0).UTC(), Version: "0.1.0"}
	if err := Write(p, st); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("state file: %v mode %v", err, fi.Mode())
	}
	got, err := Read(p)
	if err != nil || *got != *st {
		t.Fatalf("Read = %+v, %v; want %+v", got, err, st)
	}
	if err := RemoveIfOwn(p, 43); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatal("RemoveIfOwn removed another daemon's state file")
	}
	if err := RemoveIfOwn(p, 42); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Fatal("RemoveIfOwn left its own state file")
	}
	os.WriteFile(p, []byte(`{"transport":"tcp"}`), 0o600)
	if _, err := Read(p); err == nil {
		t.Error("a state file without a pid was accepted")
	}
}

func TestAlive(t *testing.T) {
	if !Alive(os.Getpid()) {
		t.Error("Alive(self) = false")
	}
	if Alive(0) || Alive(-1) {
		t.Error("Alive accepts non-positive pids")
	}
}

func TestPaths(t *testing.T) {
	p := config.Paths{Home: "/home/u", RuntimeDir: "/run/user/1"}
	cfg := config.Default()
	if got := SocketPath(cfg, p, "ws-1", ""); got != "/run/user/1/clawd.ws-1.sock" {
		t.Errorf("default socket %s", got)
	}
	if got := SocketPath(cfg, p, "ws-1", "/x.sock"); got != "/x.sock" {
		t.Errorf("override socket %s", got)
	}
	cfg.SocketPath = "~/s.sock"
	if got := SocketPath(cfg, p, "ws-1", ""); got != "/home/u/s.sock" {
		t.Errorf("configured socket %s", got)
	}
	if got := TokenPath(cfg, p, "ws-1"); got != "/home/u/.claude/hooks/.clawde-token-ws-1" {
		t.Errorf("default token path %s", got)
	}
	cfg.TokenPath = "~/t"
	if got := TokenPath(cfg, p, "ws-1"); got != "/home/u/t" {
		t.Errorf("configured token path %s", got)
	}
}
