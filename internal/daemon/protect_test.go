//go:build unix

package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/clawde/clawd/internal/builtin"
	"github.com/clawde/clawd/internal/config"
	"github.com/clawde/clawd/internal/sandbox"
	"github.com/clawde/clawd/internal/support/fileutil"
	"github.com/clawde/clawd/test/clawdtest"
)

// homeState is a daemon whose workspace is its own $HOME, holding every
// piece of clawd's state: the case where the file tools must refuse it.
type homeState struct {
	t     *testing.T
	home  string
	d     *Daemon
	log   *clawdtest.SyncBuffer
	wsID  string
	items map[string]string // name -> path relative to home
}

func mustWrite(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func newHomeState(t *testing.T) *homeState {
	t.Helper()
	home := clawdtest.IsolateHome(t)
	h := &homeState{t: t, home: home, wsID: config.WorkspaceID(home), log: &clawdtest.SyncBuffer{}}
	tok := filepath.Join(".claude", "hooks", ".clawde-token-"+h.wsID)
	sock := filepath.Join("run", "clawd."+h.wsID+".sock")
	h.items = map[string]string{
		"secret":     ".local/share/clawde/session.secret",
		"runstate":   ".local/share/clawde/run/" + h.wsID + ".tcp.json",
		"config":     ".config/clawde/mcp-server.toml",
		"token":      tok,
		"credential": tok + ".cc",
		"socket":     sock,
		"lock":       sock + ".lock",
	}
	mustWrite(t, filepath.Join(home, h.items["secret"]), strings.Repeat("ab", 32)+"\n")
	mustWrite(t, filepath.Join(home, h.items["runstate"]), `{"pid":1}`+"\n")
	mustWrite(t, filepath.Join(home, h.items["config"]), "policy_stub_mode = false\n")
	mustWrite(t, filepath.Join(home, h.items["token"]), "TOKENVALUE-0123456789\n")
	mustWrite(t, filepath.Join(home, h.items["credential"]), "CREDENTIALVALUE-0123\n")
	mustWrite(t, filepath.Join(home, h.items["lock"]), "")
	ln, err := net.Listen("unix", filepath.Join(home, h.items["socket"]))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	h.d, err = New(Options{Workspace: home, Logger: slog.New(slog.NewTextHandler(h.log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.d.Close() })
	// The database exists now (the store created it).
	h.items["db"] = ".local/share/clawde/clawd.db"
	return h
}

func (h *homeState) call(name string, args map[string]any) (any, error) {
	h.t.Helper()
	e, ok := h.d.Server.Registry.Lookup(name)
	if !ok {
		h.t.Fatalf("no tool %s", name)
	}
	raw, err := json.Marshal(args)
	if err != nil {
		h.t.Fatal(err)
	}
	return e.Tool.Call(context.Background(), raw)
}

// wantProtected fails unless err is the guard's refusal.
func wantProtected(t *testing.T, what string, res any, err error) {
	t.Helper()
	var v *sandbox.Violation
	if !errors.As(err, &v) || !strings.HasPrefix(v.Reason, "protected: ") {
		t.Errorf("%s: got %v, %v; want a protected sandbox violation", what, summarize(res), err)
	}
}

func summarize(res any) string {
	s := fmt.Sprintf("%+v", res)
	if len(s) > 120 {
		s = s[:120] + "..."
	}
	return s
}

// snapshotItem is what must not change: content (or kind) and identity.
func snapshotItem(t *testing.T, p string) string {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		return "missing"
	}
	if !fi.Mode().IsRegular() {
		return fi.Mode().Type().String()
	}
	b, _ := os.ReadFile(p)
	return fmt.Sprintf("inode %d, %d bytes %q", fi.Sys().(*syscall.Stat_t).Ino, fi.Size(), b)
}

// TestProtectedStateReach is the table: every protected item, reached
// every way a path can reach it, through read_file, search and write_file.
func TestProtectedStateReach(t *testing.T) {
	h := newHomeState(t)
	home := h.home
	for _, name := range []string{"secret", "db", "runstate", "config", "token", "credential", "socket", "lock"} {
		rel := h.items[name]
		abs := filepath.Join(home, rel)
		first, _, _ := strings.Cut(rel, "/")
		dir, base := filepath.Dir(rel), filepath.Base(rel)
		// Links in the workspace root, relative (os.Root refuses absolute
		// symlink targets anyway; the chain's check says so too).
		fileLink, dirLink, hard := "lf-"+name, "ld-"+name, "hl-"+name
		if err := os.Symlink(rel, filepath.Join(home, fileLink)); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(dir, filepath.Join(home, dirLink)); err != nil {
			t.Fatal(err)
		}
		hasHard := os.Link(abs, filepath.Join(home, hard)) == nil
		ways := map[string]string{
			"direct":          rel,
			"absolute":        abs,
			"dot-dotdot":      "./" + first + "/../" + rel,
			"symlink to it":   fileLink,
			"symlink its dir": dirLink + "/" + base,
		}
		if hasHard {
			ways["hard link"] = hard
		}
		for how, arg := range ways {
			what := name + " via " + how + " (" + arg + ")"
			before := snapshotItem(t, abs)

			res, err := h.call("read_file", map[string]any{"path": arg, "encoding": "base64"})
			wantProtected(t, "read_file "+what, res, err)

			if name != "socket" {
				// search of a single file (a socket is refused as not a
				// file before any read either way).
				res, err = h.call("search", map[string]any{"query": "a", "path": arg})
				wantProtected(t, "search "+what, res, err)
			}

			res, err = h.call("write_file", map[string]any{"path": arg, "content": "policy_stub_mode = true\n"})
			if how == "symlink to it" {
				// write_file replaces a symlink at the target, never
				// follows it: the link becomes a file, the item is
				// untouched. Put the link back for the next ways.
				if err != nil {
					t.Errorf("write_file %s: %v (a link in the root is the caller's to replace)", what, err)
				}
				os.Remove(filepath.Join(home, fileLink))
				os.Symlink(rel, filepath.Join(home, fileLink))
			} else {
				wantProtected(t, "write_file "+what, res, err)
			}
			if after := snapshotItem(t, abs); after != before {
				t.Errorf("write_file %s changed the item: %s -> %s", what, before, after)
			}
		}
	}

	// search of the whole workspace finds nothing from the state.
	for _, q := range []string{strings.Repeat("ab", 32), "TOKENVALUE", "CREDENTIALVALUE", "policy_stub_mode"} {
		res, err := h.call("search", map[string]any{"query": q})
		if err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
		if sr := res.(*builtin.SearchResult); sr.TotalMatches != 0 {
			t.Errorf("search %q found clawd's state: %+v", q, sr.Matches)
		}
	}
	// search of a protected directory is refused, not silently empty.
	res, err := h.call("search", map[string]any{"query": "a", "path": ".local/share/clawde"})
	wantProtected(t, "search of the data directory", res, err)

	// list_dir lists the names (and descends): metadata is not secret.
	res, err = h.call("list_dir", map[string]any{"path": ".local/share/clawde", "recursive": true, "include_hidden": true})
	if err != nil {
		t.Fatalf("list_dir of the data directory: %v", err)
	}
	if !strings.Contains(fmt.Sprint(res), "session.secret") {
		t.Errorf("list_dir does not list session.secret: %v", summarize(res))
	}
}

// TestProtectedWrites: new files in protected places, with and without
// create_parents, are refused and leave nothing behind.
func TestProtectedWrites(t *testing.T) {
	h := newHomeState(t)
	for _, p := range []string{
		".local/share/clawde/new.txt",
		".local/share/clawde/run/x.unix.json",
		".local/share/clawde/newdir/x",
		".config/clawde/other.toml",
		".config/clawde/sub/x",
		".claude/hooks/.clawde-token-other-12345678",
		".claude/hooks/..clawde-token-" + h.wsID + ".tmp-1",
		"run/clawd.other.sock",
	} {
		res, err := h.call("write_file", map[string]any{"path": p, "content": "x", "create_parents": true})
		wantProtected(t, "write_file "+p, res, err)
		if _, err := os.Lstat(filepath.Join(h.home, p)); err == nil {
			t.Errorf("write_file %s created it", p)
		}
	}
	if _, err := os.Lstat(filepath.Join(h.home, ".local/share/clawde/newdir")); err == nil {
		t.Error("a refused create_parents made a directory inside the data directory")
	}
	// Other files next to clawd's are the user's: allowed.
	for _, p := range []string{".claude/hooks/my-hook.sh", ".claude/settings.json", ".config/other/x.toml", "run/other.sock.txt"} {
		if _, err := h.call("write_file", map[string]any{"path": p, "content": "x", "create_parents": true}); err != nil {
			t.Errorf("write_file %s: %v", p, err)
		}
	}
}

// TestProtectedConfigNotYetThere: a config file that does not exist would
// still be hot-loaded once created, so creating it is refused, with or
// without its directory, and the refused call creates no directory.
func TestProtectedConfigNotYetThere(t *testing.T) {
	home := clawdtest.IsolateHome(t)
	d, err := New(Options{Workspace: home})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	call := func(args map[string]any) (any, error) {
		e, _ := d.Server.Registry.Lookup("write_file")
		raw, _ := json.Marshal(args)
		return e.Tool.Call(context.Background(), raw)
	}
	cfg := ".config/clawde/mcp-server.toml"
	res, err := call(map[string]any{"path": cfg, "content": "policy_stub_mode = true\n", "create_parents": true})
	wantProtected(t, "creating the config with its directories", res, err)
	if _, err := os.Lstat(filepath.Join(home, ".config", "clawde")); err == nil {
		t.Error("the refused call created .config/clawde")
	}
	// .config itself is the user's.
	if _, err := call(map[string]any{"path": ".config/other/x", "content": "x", "create_parents": true}); err != nil {
		t.Errorf("writing elsewhere in .config: %v", err)
	}
	// The directory appears (the user runs clawd init): still refused.
	if err := os.MkdirAll(filepath.Join(home, ".config", "clawde"), 0o700); err != nil {
		t.Fatal(err)
	}
	res, err = call(map[string]any{"path": cfg, "content": "policy_stub_mode = true\n"})
	wantProtected(t, "creating the config in its new directory", res, err)
	if _, err := os.Lstat(filepath.Join(home, cfg)); err == nil {
		t.Error("the config file was created")
	}
}

// TestProtectedConfigThroughDanglingLink: create_parents follows a symlink
// inside the workspace even when its target does not exist yet (a cloned
// repository can carry one), so the directories it would make are judged
// where the link leads, not by the link's own name: the config directory
// is not made through it, by the chain's check or the tool's.
func TestProtectedConfigThroughDanglingLink(t *testing.T) {
	home := clawdtest.IsolateHome(t)
	d, err := New(Options{Workspace: home})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := os.MkdirAll(filepath.Join(home, "proj"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../.config/clawde", filepath.Join(home, "proj", "cfg")); err != nil {
		t.Fatal(err)
	}
	e, _ := d.Server.Registry.Lookup("write_file")
	for _, p := range []string{"proj/cfg/mcp-server.toml", "proj/cfg/sub/x.toml"} {
		if err := d.WS.CheckState(context.Background(), p, sandbox.AccessWrite); err == nil {
			t.Errorf("the chain's check lets write_file %s through", p)
		}
		raw, _ := json.Marshal(map[string]any{"path": p, "content": "policy_stub_mode = true\n", "create_parents": true})
		res, err := e.Tool.Call(context.Background(), raw)
		wantProtected(t, "write_file "+p, res, err)
		if _, err := os.Lstat(filepath.Join(home, ".config", "clawde")); err == nil {
			t.Fatalf("write_file %s through a dangling link created .config/clawde", p)
		}
	}
}

// TestProtectionFollowsNewInodes: the token file is replaced by a new inode
// on every rotation, run files and SQLite's side files appear while clawd
// runs; each is refused on the very next call.
func TestProtectionFollowsNewInodes(t *testing.T) {
	h := newHomeState(t)
	tok := filepath.Join(h.home, h.items["token"])
	for i := range 50 {
		content := fmt.Sprintf("ROTATED-%d\n", i)
		if err := fileutil.WriteAtomic(tok, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		res, err := h.call("read_file", map[string]any{"path": h.items["token"]})
		wantProtected(t, fmt.Sprintf("read_file of the token after rotation %d", i), res, err)
		res, err = h.call("search", map[string]any{"query": "ROTATED"})
		if err != nil || res.(*builtin.SearchResult).TotalMatches != 0 {
			t.Errorf("search after rotation %d: %v %v", i, summarize(res), err)
		}
		fresh := fmt.Sprintf(".local/share/clawde/run/fresh-%d.json", i)
		mustWrite(t, filepath.Join(h.home, fresh), "{}\n")
		res, err = h.call("read_file", map[string]any{"path": fresh})
		wantProtected(t, "read_file of a new file in the data directory", res, err)
	}
}

// TestStartupWarning: one warning naming the protected places and saying
// bash is not confined.
func TestStartupWarning(t *testing.T) {
	h := newHomeState(t)
	out := h.log.String()
	if n := strings.Count(out, "the workspace contains clawd's own state"); n != 1 {
		t.Fatalf("%d warnings, want 1:\n%s", n, out)
	}
	for _, want := range []string{"bash is not confined", filepath.Join(h.home, ".local/share/clawde"), filepath.Join(h.home, ".config/clawde"), ".clawde-token-"} {
		if !strings.Contains(out, want) {
			t.Errorf("warning lacks %q:\n%s", want, out)
		}
	}
}

// TestStateOutsideWorkspace: the usual case costs no check and changes
// nothing, and no warning is printed.
func TestStateOutsideWorkspace(t *testing.T) {
	home := clawdtest.IsolateHome(t)
	ws := filepath.Join(home, "src", "proj")
	mustWrite(t, filepath.Join(ws, "a.txt"), "hello\n")
	var log clawdtest.SyncBuffer
	d, err := New(Options{Workspace: ws, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.WS.Guard().Active() {
		t.Error("guard active although no state lies in the workspace")
	}
	if strings.Contains(log.String(), "own state") {
		t.Errorf("warning printed: %s", log.String())
	}
	e, _ := d.Server.Registry.Lookup("read_file")
	res, err := e.Tool.Call(context.Background(), []byte(`{"path":"a.txt"}`))
	if err != nil || res.(*builtin.ReadFileResult).Content != "hello\n" {
		t.Errorf("read_file: %v %v", res, err)
	}
}

// TestWorkspaceInsideDataDir: a workspace inside clawd's data directory is
// clawd's state whole.
func TestWorkspaceInsideDataDir(t *testing.T) {
	home := clawdtest.IsolateHome(t)
	data := filepath.Join(home, ".local", "share", "clawde")
	mustWrite(t, filepath.Join(data, "session.secret"), strings.Repeat("cd", 32)+"\n")
	d, err := New(Options{Workspace: data})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	e, _ := d.Server.Registry.Lookup("read_file")
	res, err := e.Tool.Call(context.Background(), []byte(`{"path":"session.secret"}`))
	wantProtected(t, "read_file session.secret in a data-dir workspace", res, err)
	if r, ok := res.(*builtin.ReadFileResult); ok && bytes.Contains([]byte(r.Content), []byte("cdcd")) {
		t.Error("secret returned")
	}
}

// TestProtectionUnderConcurrentRotation: readers on several goroutines
// never get the token while it is rotated under them (run with -race).
func TestProtectionUnderConcurrentRotation(t *testing.T) {
	h := newHomeState(t)
	tok := filepath.Join(h.home, h.items["token"])
	e, _ := h.d.Server.Registry.Lookup("read_file")
	raw := []byte(`{"path":"` + h.items["token"] + `"}`)
	stop := make(chan struct{})
	errs := make(chan string, 8)
	for range 4 {
		go func() {
			for {
				select {
				case <-stop:
					errs <- ""
					return
				default:
				}
				res, err := e.Tool.Call(context.Background(), raw)
				var v *sandbox.Violation
				if !errors.As(err, &v) {
					errs <- fmt.Sprintf("read_file of the token: %v %v", summarize(res), err)
					return
				}
			}
		}()
	}
	for i := range 100 {
		if err := fileutil.WriteAtomic(tok, []byte(fmt.Sprintf("R-%d\n", i)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	for range 4 {
		if msg := <-errs; msg != "" {
			t.Error(msg)
		}
	}
}
