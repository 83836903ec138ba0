package builtin

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/sandbox"
	"github.com/clawde/clawd/internal/support/fileutil"
	"github.com/clawde/clawd/internal/support/safetext"
	"github.com/clawde/clawd/internal/tools"
)

type writeFile struct {
	env  *Env
	spec tools.Spec
}

// NewWriteFile returns the write_file tool.
func NewWriteFile(env *Env) tools.Tool {
	return &writeFile{env: env, spec: tools.Spec{
		Name:  "write_file",
		Title: "Write file",
		Description: "Create or replace a file in the workspace with the given content, atomically (readers see the old " +
			"or the new file, never a part). encoding \"utf8\" (default) or \"base64\". A missing parent directory is an " +
			"error unless create_parents is true. An existing file keeps its permission bits; a symlink at the path is " +
			"replaced by a regular file, not followed. Returns the bytes written and the canonical absolute path.",
		Permission:   tools.PermWrite,
		InputSchema:  compact(writeFileInputSchema),
		OutputSchema: compact(writeFileOutputSchema),
		PathArgs:     []string{"path"},
		StateAccess:  sandbox.AccessWrite,
	}}
}

func (t *writeFile) Spec() *tools.Spec { return &t.spec }

type writeFileArgs struct {
	Path          *string `json:"path"`
	Content       *string `json:"content"`
	Encoding      string  `json:"encoding"`
	CreateParents bool    `json:"create_parents"`
}

// WriteFileResult is write_file's output object.
type WriteFileResult struct {
	BytesWritten int64  `json:"bytes_written"`
	Path         string `json:"path"`
}

// newFilePerm is the mode a new file is created with; the process umask
// applies (0644 under the usual 022), as for any editor's new file.
const newFilePerm fs.FileMode = 0o666

// newDirPerm is the mode of directories made by create_parents (umask applies).
const newDirPerm fs.FileMode = 0o777

func (t *writeFile) Call(ctx context.Context, raw jsontext.Value) (any, error) {
	var a writeFileArgs
	if err := tools.DecodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if a.Path == nil {
		return nil, &tools.ArgError{Msg: `"path" is required`}
	}
	if a.Content == nil {
		return nil, &tools.ArgError{Msg: `"content" is required`}
	}
	var data []byte
	switch a.Encoding {
	case "", "utf8":
		data = []byte(*a.Content)
	case "base64":
		d, err := base64.StdEncoding.DecodeString(*a.Content)
		if err != nil {
			return nil, &tools.ArgError{Msg: fmt.Sprintf(`"content" is not valid base64 (%v); send standard base64 with padding, or use "encoding": "utf8" for text`, err)}
		}
		data = d
	default:
		return nil, &tools.ArgError{Msg: `"encoding" must be "utf8" or "base64"`}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p := *a.Path
	ws := t.env.WS
	rel, err := ws.Rel(p)
	if err != nil {
		return nil, err
	}
	if rel == "." || strings.HasSuffix(p, "/") || strings.HasSuffix(p, string(filepath.Separator)) || namesDirByDots(p) {
		return nil, tools.Errorf("%q names a directory; write_file writes a file: give the file's path (e.g. %q)", p, path.Join(rel, "notes.txt"))
	}
	dir, base := path.Dir(rel), path.Base(rel)

	parent, err := openParent(ctx, ws, p, dir, base, a.CreateParents)
	if err != nil {
		return nil, err
	}
	defer parent.Close()
	if err := checkProtected(ws, parent, p, base); err != nil {
		return nil, err
	}

	perm, keepMode, err := checkTarget(ctx, ws, parent, p, rel, base)
	if err != nil {
		return nil, err
	}
	canon := canonicalDir(ctx, ws, parent, dir)
	if err := replaceFile(parent, base, data, perm, keepMode); err != nil {
		return nil, fileError(p, err)
	}
	// The canonical path may pass through a directory whose name is not
	// UTF-8 (safetext.ValidUTF8); the file is written either way.
	return &WriteFileResult{BytesWritten: int64(len(data)), Path: safetext.ValidUTF8(filepath.Join(canon, filepath.FromSlash(base)))}, nil
}

// namesDirByDots reports whether p's last component is "." or "..": it
// names a directory, though lexical cleaning drops the component ("new/."
// becomes "new", "a/b/.." becomes "a") and would write a file there.
func namesDirByDots(p string) bool {
	base := p[strings.LastIndexAny(p, "/"+string(filepath.Separator))+1:]
	return base == "." || base == ".."
}

// openParent opens the directory that will hold the file as its own Root, so
// every later step (stat, temp create, rename) is relative to that one
// directory handle and nothing is looked up by name again.
//
// It is opened with sandbox.OpenDir, so a named pipe in place of dir fails
// at once with ENOTDIR instead of blocking the open.
func openParent(ctx context.Context, ws *sandbox.Workspace, p, dir, base string, create bool) (*os.Root, error) {
	r, err := sandbox.OpenDir(ws.Root, dir)
	if err == nil {
		return r, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		if !create {
			return nil, tools.Errorf("the parent directory %q of %q does not exist; pass \"create_parents\": true to create it", dir, p)
		}
		if err := checkProtectedParents(ctx, ws, p, dir, base); err != nil {
			return nil, err
		}
		if err := ws.Root.MkdirAll(dir, newDirPerm); err != nil {
			return nil, parentError(p, dir, err)
		}
		if r, err = sandbox.OpenDir(ws.Root, dir); err == nil {
			return r, nil
		}
	}
	return nil, parentError(p, dir, err)
}

func parentError(p, dir string, err error) error {
	if sandbox.IsEscape(err) {
		return sandbox.AsViolation(p, err)
	}
	if errors.Is(err, fs.ErrExist) || errors.Is(err, syscall.ENOTDIR) {
		// MkdirAll reports EEXIST when the last component is a file.
		return tools.Errorf("%q: a component of the parent directory %q is not a directory", p, dir)
	}
	return fileError(p, err)
}

// checkProtected refuses a write into clawd's own state, decided by the
// identity of the directory actually opened (parent) and the name written
// there: the directory is protected or lies in a protected one, the name is
// a protected file of that directory whether or not it exists yet (a config
// file created there would be hot-loaded), or the entry now at that name is
// a protected object (a hard link to the token file, say).
func checkProtected(ws *sandbox.Workspace, parent *os.Root, p, base string) error {
	g := ws.Guard()
	if !g.Active() {
		return nil
	}
	dir, err := parent.Stat(".")
	if err != nil {
		return fileError(p, err)
	}
	if why := g.NameWhy(dir, base); why != "" {
		return sandbox.ProtectedViolation(p, why)
	}
	if fi, err := parent.Lstat(base); err == nil {
		if why := g.ObjectWhy(fi); why != "" {
			return sandbox.ProtectedViolation(p, why)
		}
	}
	return nil
}

// checkProtectedParents runs before create_parents makes anything: the
// deepest existing directory of dir must not be protected, and the path to
// be created below it must not be (or lead into) clawd's state, such as a
// config directory that does not exist yet. A refused call thus leaves no
// directory behind. The directory finally opened is checked again by
// checkProtected.
func checkProtectedParents(ctx context.Context, ws *sandbox.Workspace, p, dir, base string) error {
	why, err := ws.WriteWhy(ctx, dir, base)
	if err != nil {
		return err
	}
	if why != "" {
		return sandbox.ProtectedViolation(p, why)
	}
	return nil
}

// checkTarget looks at what the path names now and decides the new file's
// mode. An existing regular file keeps its permission bits (an executable
// script stays executable; setuid/setgid/sticky are dropped). A directory, a
// read-only file and special files are refused. A symlink is replaced, not
// followed, unless it leads outside the workspace: that is a violation, the
// same answer the chain's sandbox step gives, so a model is never told it
// wrote "through" a link that pointed outside.
func checkTarget(ctx context.Context, ws *sandbox.Workspace, parent *os.Root, p, rel, base string) (perm fs.FileMode, keepMode bool, err error) {
	fi, err := parent.Lstat(base)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return newFilePerm, false, nil
	case err != nil:
		return 0, false, fileError(p, err)
	}
	m := fi.Mode()
	switch {
	case m.IsDir():
		return 0, false, tools.Errorf("%q is a directory; write_file replaces files only", p)
	case m&fs.ModeSymlink != 0:
		if _, err := ws.Check(ctx, rel); err != nil {
			var v *sandbox.Violation
			if errors.As(err, &v) {
				return 0, false, v
			}
		}
		return newFilePerm, false, nil
	case !m.IsRegular():
		return 0, false, tools.Errorf("%q is %s; write_file replaces regular files only", p, fileutil.Kind(m))
	case m.Perm()&0o222 == 0:
		return 0, false, tools.Errorf("%q is read-only (mode %04o); write_file does not overwrite read-only files: make it writable first (bash: chmod u+w) if that is intended", p, m.Perm())
	}
	return m.Perm(), true, nil
}

// canonicalDir returns the absolute host path of the parent directory with
// symlinks resolved: from the open handle where the OS can tell (Linux
// /proc), else by resolving dir through the workspace.
func canonicalDir(ctx context.Context, ws *sandbox.Workspace, parent *os.Root, dir string) string {
	if f, err := parent.Open("."); err == nil {
		p, ok := fdPath(f)
		f.Close()
		if ok {
			if _, err := ws.Rel(p); err == nil {
				return p
			}
		}
	}
	if r, err := ws.Resolve(ctx, dir); err == nil {
		return ws.Abs(r)
	}
	return ws.Abs(dir)
}

// replaceFile writes data to a new temp file in parent, syncs it and renames
// it over name. The rename replaces whatever directory entry name is (file,
// hard link, symlink) without following it, so the write cannot land outside
// the directory, and readers see the old or the new content, never a mix.
// The temp file is removed on every failure.
func replaceFile(parent *os.Root, name string, data []byte, perm fs.FileMode, chmod bool) (err error) {
	var f *os.File
	var tmp string
	for range 8 {
		tmp = tempName()
		// O_EXCL: never follows a symlink and never reuses an existing file.
		f, err = parent.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return err
	}
	closed := false
	defer func() {
		if err != nil {
			if !closed {
				f.Close()
			}
			parent.Remove(tmp)
		}
	}()
	if chmod {
		// The create mode was masked by the umask; set the old bits exactly.
		if err = f.Chmod(perm); err != nil {
			return err
		}
	}
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	closed = true
	if err = f.Close(); err != nil {
		return err
	}
	return parent.Rename(tmp, name)
}

// tempName is a hidden, short name (long targets would overflow NAME_MAX if
// the target's name were embedded) that marks the file as clawd's.
func tempName() string {
	var b [8]byte
	rand.Read(b[:])
	return ".clawd-write-" + hex.EncodeToString(b[:]) + ".tmp"
}
