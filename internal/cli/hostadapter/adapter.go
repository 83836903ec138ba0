// Package hostadapter writes clawd's entry into an MCP client's own
// configuration file (Claude Code, OpenCode, Cursor, VS Code, Claude
// Desktop) and takes it out again. Files are edited as text, so the user's
// other entries, comments and formatting stay as they were (docs/clients.md).
package hostadapter

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/clawde/clawd/internal/support/fileutil"
	"github.com/clawde/clawd/internal/support/safetext"
)

// Transports an entry can use to reach clawd.
const (
	Stdio       = "stdio"
	UnixSocket  = "unix_socket"
	TCPLoopback = "tcp_loopback"
)

// Scope says whether an entry goes into the project's file or the user's.
type Scope string

const (
	Project Scope = "project"
	User    Scope = "user"
)

// ServerName is the key clawd's entry has in every client's server map.
const ServerName = "clawd"

// BackupSuffix names the copy of a file's original bytes, made the first
// time clawd changes it and never overwritten.
const BackupSuffix = ".clawd-backup"

// Options are what an adapter needs to place and build the entry.
type Options struct {
	Workspace string // canonical workspace directory (the project for Project scope)
	Home      string // the user's home directory
	ConfigDir string // the OS's per-user config directory (os.UserConfigDir)
	// XDGConfig is $XDG_CONFIG_HOME, else ~/.config, on every OS: where
	// OpenCode keeps its global config ("" means ~/.config).
	XDGConfig string
	// ClaudeConfigDir is $CLAUDE_CONFIG_DIR: where Claude Code then keeps
	// .claude.json and settings.json instead of ~/.claude.json and
	// ~/.claude/ ("" for those).
	ClaudeConfigDir string
	GOOS            string
	Scope           Scope
	Transport       string
	Command         string // how the entry invokes clawd ("clawd" when on PATH)
	URL             string // tcp_loopback: the daemon's MCP endpoint
	// CredentialFile is the per-client credential of the adapter's Kind
	// for this workspace; entries read it when they run, never copy it.
	CredentialFile string
}

// Entry is where an adapter's server entry lives and what it is.
type Entry struct {
	File  string   // the client's config file
	Path  []string // members from the root to the server map
	Value []byte   // compact JSON of clawd's entry
}

// Adapter is one MCP client.
type Adapter interface {
	Name() string // as on the command line: claude-code, opencode, ...
	Kind() string // the credential kind its connections get: cc, oc, local
	// Scopes lists the scopes the client has, the default first.
	Scopes() []Scope
	// Entry builds clawd's entry for o, or says why o cannot work.
	Entry(o Options) (Entry, error)
	// ProjectMarker is the project-scope file whose presence makes a
	// directory count as this client's project ("" when none).
	ProjectMarker(workspace string) string
}

// Change is one file's content before and after.
type Change struct {
	File    string
	Before  []byte      // nil when the file does not exist
	After   []byte      // nil deletes the file
	Restore bool        // After is the backup's bytes: remove the backup once written
	Mode    fs.FileMode // for a new file; 0 means 0644
	// NoBackup: Before already holds a clawd entry (a reinstall, or an
	// uninstall cutting it out), so it is not the user's original and must
	// not become the backup a later uninstall restores.
	NoBackup bool
	// Root, when set, is the project the file must stay in: a symlink
	// (or linked directory) leading out of it is refused, so a checked-out
	// repository cannot make install edit a file elsewhere.
	Root string
	Note string
}

// Changed reports whether applying c would alter the file.
func (c Change) Changed() bool {
	return (c.Before == nil) != (c.After == nil) || !bytes.Equal(c.Before, c.After)
}

// PlanInstall computes the change that puts clawd's entry into the file,
// replacing an entry called clawd if there is one. Installing twice yields
// no change the second time.
func PlanInstall(a Adapter, o Options) (Change, error) {
	e, err := a.Entry(o)
	if err != nil {
		return Change{}, err
	}
	root := ""
	if o.Scope == Project {
		root = o.Workspace
		if err := confined(e.File, root); err != nil {
			return Change{}, err
		}
	}
	before, err := readFile(e.File)
	if err != nil {
		return Change{}, err
	}
	after, err := SetMember(before, e.Path, ServerName, e.Value)
	if err != nil {
		return Change{}, fmt.Errorf("%s: %v; fix the file or move it away, then run install again", safetext.ShellWord(e.File), err)
	}
	if cur, ok, _ := GetMember(before, e.Path, ServerName); ok && bytes.Equal(cur, e.Value) {
		after = before // already current: leave the bytes alone
	}
	_, had, _ := GetMember(before, e.Path, ServerName)
	// A user file clawd creates is private (the client may later store
	// account data in it, as Claude Code does in ~/.claude.json); a project
	// file is meant to be shared.
	mode := fs.FileMode(0o644)
	if o.Scope == User {
		mode = 0o600
	}
	return Change{File: e.File, Before: before, After: after, NoBackup: had, Root: root, Mode: mode}, nil
}

// PlanUninstall computes the change that takes clawd's entry out of file at
// path (root: the project it must stay in, "" for a user file). When the file is exactly what installing into the backup would
// give, the backup's bytes come back (and a file clawd created goes away);
// otherwise only the entry is cut out and everything else stays.
func PlanUninstall(file string, path []string, root string) (c Change, err error) {
	if root != "" {
		if err := confined(file, root); err != nil {
			return Change{}, err
		}
	}
	defer func() { c.Root = root }()
	before, err := readFile(file)
	if err != nil || before == nil {
		return Change{File: file, Before: before, After: before}, err
	}
	cur, ok, err := GetMember(before, path, ServerName)
	if err != nil {
		return Change{}, fmt.Errorf("%s: %v; remove the %q entry by hand", safetext.ShellWord(file), err, ServerName)
	}
	if !ok {
		return Change{File: file, Before: before, After: before, Note: "no clawd entry"}, nil
	}
	backup, berr := readFile(file + BackupSuffix)
	switch prev, ok, _ := GetMember(backup, path, ServerName); {
	case berr != nil:
		// Not a file that can be read (a directory a repository brought
		// along): no original to restore, so only the entry goes.
	case ok && bytes.Equal(prev, cur):
		// A backup that already holds this very entry is not the user's
		// original (an earlier clawd saved one at uninstall).
	case backup != nil:
		if redo, err := SetMember(backup, path, ServerName, cur); err == nil && bytes.Equal(redo, before) {
			return Change{File: file, Before: before, After: backup, Restore: true, Note: "restored the original bytes"}, nil
		}
	default:
		if fresh, _ := SetMember(nil, path, ServerName, cur); bytes.Equal(fresh, before) {
			return Change{File: file, Before: before, After: nil, Note: "removed the file clawd created"}, nil
		}
	}
	after, _, err := RemoveMember(before, path, ServerName)
	if err != nil {
		return Change{}, err
	}
	return Change{File: file, Before: before, After: after, NoBackup: true, Note: "removed the clawd entry; the file has other changes, so the rest stays"}, nil
}

// Check reports what would keep Apply from writing c, before anything is
// written: a file leading out of its project, one changed since it was
// read, or one the user made read-only (a rename would replace it all the
// same, and root ignores the mode, so clawd honours it itself).
func (c Change) Check() error {
	if !c.Changed() {
		return nil
	}
	if c.Root != "" {
		if err := confined(c.File, c.Root); err != nil {
			return err
		}
	}
	// The plan was made from Before; a client that saved the file since
	// (Claude Code rewrites ~/.claude.json as it runs) would lose that edit
	// to After. The per-user lock keeps other clawds out, not the client.
	if now, err := readFile(c.File); err != nil {
		return err
	} else if (now == nil) != (c.Before == nil) || !bytes.Equal(now, c.Before) {
		return fmt.Errorf("%s changed since clawd read it (the client saved it meanwhile?); nothing was written to it: run the command again", safetext.ShellWord(c.File))
	}
	target, err := fileutil.FollowLinks(c.File)
	if err != nil {
		return err
	}
	if st, err := os.Stat(target); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o200 == 0 {
		return fmt.Errorf("%s is read-only (mode %04o); clawd does not change a file you protected: make it writable (chmod u+w %s) and run again, or edit it by hand", safetext.ShellWord(c.File), st.Mode().Perm(), safetext.ShellWord(target))
	}
	return nil
}

// Apply writes c: the first change to an existing file saves its original
// bytes next to it (never overwriting an earlier backup); the new content
// replaces the file atomically with the file's mode, through a symlink.
func Apply(c Change) error {
	if !c.Changed() {
		return nil
	}
	if err := c.Check(); err != nil {
		return err
	}
	target, err := fileutil.FollowLinks(c.File)
	if err != nil {
		return err
	}
	backup := c.File + BackupSuffix
	if c.After == nil {
		if err := os.Remove(target); err != nil {
			return err
		}
		return removeIfExists(backup)
	}
	mode := fs.FileMode(0o644)
	if c.Mode != 0 {
		mode = c.Mode
	}
	st, err := os.Stat(target)
	if err == nil {
		mode = st.Mode().Perm()
		if _, err := os.Lstat(backup); errors.Is(err, fs.ErrNotExist) && c.Before != nil && !c.Restore && !c.NoBackup {
			if err := fileutil.WriteAtomicLike(backup, c.Before, mode, st); err != nil {
				return fmt.Errorf("backing up %s: %v", safetext.ShellWord(c.File), err)
			}
		}
	} else if err := mkdirFor(c, filepath.Dir(target)); err != nil {
		return err
	}
	if err := fileutil.WriteAtomicLike(target, c.After, mode, st); err != nil {
		return err
	}
	if c.Restore {
		return removeIfExists(backup)
	}
	return nil
}

// mkdirFor creates the missing directories of a new file: shared (0755)
// in a project, private (0700) in the user's home, where ~/.claude/hooks
// also holds clawd's token and credential files.
func mkdirFor(c Change, dir string) error {
	if c.Root != "" {
		return os.MkdirAll(dir, 0o755)
	}
	return fileutil.MkdirPrivate(dir)
}

func removeIfExists(p string) error {
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func readFile(p string) ([]byte, error) {
	b, err := ReadConfig(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

// MaxConfigBytes bounds what is read of a client's config file. A project's
// file comes with the repository; ~/.claude.json, which keeps history, stays
// far below this.
const MaxConfigBytes = 64 << 20

// ReadConfig reads a client's config file: a regular file (checked before
// it is opened, so a FIFO cannot block the open, and again on the open
// file) of at most MaxConfigBytes. A missing file is fs.ErrNotExist.
func ReadConfig(p string) ([]byte, error) {
	if fi, err := os.Stat(p); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", safetext.ShellWord(p))
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", safetext.ShellWord(p))
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxConfigBytes+1))
	if err == nil && len(data) > MaxConfigBytes {
		err = fmt.Errorf("%s is larger than %d MiB", safetext.ShellWord(p), MaxConfigBytes>>20)
	}
	return data, err
}

var adapters = map[string]Adapter{}

func register(a Adapter) { adapters[a.Name()] = a }

// Lookup returns the adapter called name.
func Lookup(name string) (Adapter, error) {
	if a, ok := adapters[name]; ok {
		return a, nil
	}
	return nil, fmt.Errorf("unknown client %q: use one of %s", name, strings.Join(Names(), ", "))
}

// Names lists the clients install knows, sorted.
func Names() []string {
	var n []string
	for k := range adapters {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// confined checks that file, with every symlink on its way resolved (as far
// as it exists), lies inside root.
func confined(file, root string) error {
	r, err := filepath.EvalSymlinks(root)
	if err != nil {
		return err
	}
	p, err := fileutil.FollowLinks(filepath.Clean(file))
	if err != nil {
		return err
	}
	rest := ""
	for {
		if resolved, err := filepath.EvalSymlinks(p); err == nil {
			full := filepath.Join(resolved, rest)
			if rel, err := filepath.Rel(r, full); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return fmt.Errorf("%s leads to %s, outside the project %s (a symlink); clawd does not write there: remove the link or use --user", safetext.ShellWord(file), safetext.ShellWord(full), safetext.ShellWord(root))
			}
			return nil
		}
		parent := filepath.Dir(p)
		if parent == p {
			return nil
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// Status is what Check finds: whether the client's file holds clawd's
// entry and whether it is the entry install would write now (a changed
// binary path, transport or workspace makes it stale).
type Status struct {
	File      string
	Installed bool
	Current   bool
	Entry     []byte // compact JSON of the entry found
}

// Check reports the state of clawd's entry for o (o.Transport is the one
// expected; "" accepts any transport as current if the entry exists).
func Check(a Adapter, o Options) (Status, error) {
	want := o
	if want.Transport == "" {
		want.Transport = Stdio
	}
	e, err := a.Entry(want)
	if err != nil && e.File == "" {
		return Status{}, err
	}
	st := Status{File: e.File}
	src, err := readFile(e.File)
	if err != nil {
		return st, err
	}
	cur, ok, err := GetMember(src, e.Path, ServerName)
	if err != nil {
		return st, fmt.Errorf("%s: %v", safetext.ShellWord(e.File), err)
	}
	st.Installed, st.Entry = ok, cur
	if !ok {
		return st, nil
	}
	if o.Transport == "" {
		for _, tr := range []string{Stdio, UnixSocket, TCPLoopback} {
			want.Transport = tr
			if e, err := a.Entry(want); err == nil && bytes.Equal(e.Value, cur) {
				st.Current = true
			}
		}
		return st, nil
	}
	st.Current = e.Value != nil && bytes.Equal(e.Value, cur)
	return st, nil
}
