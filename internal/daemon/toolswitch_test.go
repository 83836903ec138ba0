package daemon

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawde/clawd/internal/store"
	"github.com/clawde/clawd/test/clawdtest"
)

// A [tools] switch of a configured upstream server's tool (SERVER__TOOL,
// or its hashed form) is accepted at start, when no upstream is connected
// yet, as a reload accepts it: a config a reload took must not stop the
// next start. A name of no configured server, or of no tool at all, is
// still refused, at start and on reload alike.
func TestToolSwitchOfAnUpstreamTool(t *testing.T) {
	home := clawdtest.IsolateHome(t)
	ws := t.TempDir()
	cfgFile := filepath.Join(home, "c.toml")
	write := func(toml string) {
		t.Helper()
		if err := os.WriteFile(cfgFile, []byte(toml), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("")
	d, err := New(Options{Workspace: ws, ConfigFile: cfgFile})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Store.InsertServer(context.Background(), store.NewStdioServer("ev", "/bin/true", nil)); err != nil {
		t.Fatal(err)
	}
	write("[tools]\nev__echo = false\nev__add_1a2b3c4d = false\n")
	if err := d.Reload("test"); err != nil {
		t.Errorf("reload refused a switch of a configured server's tools: %v", err)
	}
	write("[tools]\nnope__echo = false\n")
	if err := d.Reload("test"); err == nil || !strings.Contains(err.Error(), "nope__echo") {
		t.Errorf("reload of a switch of no configured server: %v", err)
	}
	d.Close()

	write("[tools]\nev__echo = false\nev__add_1a2b3c4d = false\n")
	d, err = New(Options{Workspace: ws, ConfigFile: cfgFile})
	if err != nil {
		t.Fatalf("start refused the config a reload took: %v", err)
	}
	d.Close()
	for _, bad := range []string{"nope__echo", "clawd__bash", "bsh"} {
		write("[tools]\n" + bad + " = false\n")
		if d, err := New(Options{Workspace: ws, ConfigFile: cfgFile}); err == nil {
			d.Close()
			t.Errorf("start took [tools] %s", bad)
		}
	}
}
