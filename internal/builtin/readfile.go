package builtin

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"io/fs"
	"os"
	"strconv"
	"syscall"
	"unicode/utf8"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/sandbox"
	"github.com/clawde/clawd/internal/support/fileutil"
	"github.com/clawde/clawd/internal/support/jsonenc"
	"github.com/clawde/clawd/internal/tools"
)

type readFile struct {
	env  *Env
	spec tools.Spec
}

// NewReadFile returns the read_file tool.
func NewReadFile(env *Env) tools.Tool {
	return &readFile{env: env, spec: tools.Spec{
		Name:         "read_file",
		Title:        "Read file",
		Description:  "Read a file in the workspace. encoding \"utf8\" (default) returns text and fails on invalid UTF-8; \"base64\" returns any bytes. Content is capped (truncated=true); size_bytes is the file's full size.",
		Permission:   tools.PermRead,
		InputSchema:  compact(readFileInputSchema),
		OutputSchema: compact(readFileOutputSchema),
		PathArgs:     []string{"path"},
		StateAccess:  sandbox.AccessRead,
	}}
}

func (t *readFile) Spec() *tools.Spec { return &t.spec }

type readFileArgs struct {
	Path     *string `json:"path"`
	Encoding string  `json:"encoding"`
}

// ReadFileResult is read_file's output object.
type ReadFileResult struct {
	Content   string `json:"content"`
	SizeBytes int64  `json:"size_bytes"`
	Encoding  string `json:"encoding"`
	Truncated bool   `json:"truncated"`
}

// AppendJSON encodes r as json.Marshal would. Content is valid UTF-8 here:
// utf8 content was checked, base64 is ASCII.
func (r *ReadFileResult) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"content":`...)
	dst = jsonenc.AppendString(dst, r.Content)
	dst = append(dst, `,"size_bytes":`...)
	dst = strconv.AppendInt(dst, r.SizeBytes, 10)
	dst = append(dst, `,"encoding":`...)
	dst = jsonenc.AppendString(dst, r.Encoding)
	dst = append(dst, `,"truncated":`...)
	dst = strconv.AppendBool(dst, r.Truncated)
	return append(dst, '}')
}

// JSONSizeHint is the content's length plus room for escapes and fields.
func (r *ReadFileResult) JSONSizeHint() int { return len(r.Content) + len(r.Content)/8 + 96 }

func (t *readFile) Call(ctx context.Context, raw jsontext.Value) (any, error) {
	var a readFileArgs
	if err := tools.DecodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if a.Path == nil {
		return nil, &tools.ArgError{Msg: `"path" is required`}
	}
	switch a.Encoding {
	case "":
		a.Encoding = "utf8"
	case "utf8", "base64":
	default:
		return nil, &tools.ArgError{Msg: `"encoding" must be "utf8" or "base64"`}
	}
	f, st, err := t.openRegular(*a.Path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	limit := t.env.limits().MaxReadBytes
	size := st.Size()
	n := min(size, limit)
	buf := make([]byte, n)
	got, err := readFullCtx(ctx, f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fileError(*a.Path, err)
	}
	buf = buf[:got]
	truncated := size > int64(got)
	res := &ReadFileResult{SizeBytes: size, Encoding: a.Encoding, Truncated: truncated}
	if a.Encoding == "base64" {
		res.Content = base64.StdEncoding.EncodeToString(buf)
		return res, nil
	}
	if truncated {
		buf = trimPartialRune(buf)
	}
	if !utf8.Valid(buf) {
		off := invalidOffset(buf)
		return nil, tools.Errorf("%s is not valid UTF-8 (first invalid byte at offset %d); read it with \"encoding\": \"base64\"", *a.Path, off)
	}
	// buf is never written again, so the string can share its memory
	// instead of copying up to max_read_bytes.
	res.Content = unsafe.String(unsafe.SliceData(buf), len(buf))
	return res, nil
}

// openRegular opens the workspace file at path (as the client gave it)
// for reading, and returns it with its state: a regular file that is not
// clawd's own, or an error that says what it is instead.
func (t *readFile) openRegular(path string) (*os.File, os.FileInfo, error) {
	rel, err := t.env.WS.Rel(path)
	if err != nil {
		return nil, nil, err
	}
	// A special file is refused before it is opened: opening one is not
	// harmless (a FIFO's waiting writer is let through; a device's driver
	// runs, and a watchdog device is armed by the open alone), and a socket
	// cannot be opened at all. If it is clawd's (its socket), the refusal
	// says so, and the audit row has the reason.
	if st, err := t.env.WS.Root.Stat(rel); err == nil {
		if m := st.Mode(); !m.IsRegular() && !m.IsDir() {
			if why := t.env.WS.Guard().ObjectWhy(st); why != "" {
				return nil, nil, sandbox.ProtectedViolation(path, why)
			}
			return nil, nil, tools.Errorf("%s is not a regular file (%s); read_file reads regular files only", path, fileutil.Kind(m))
		}
	}
	// O_NONBLOCK: a FIFO swapped in after that stat would otherwise block
	// the open until a writer appears; with it the open returns at once
	// and the regular-file check below refuses it. It has no effect on
	// regular files.
	f, err := t.env.WS.Root.OpenFile(rel, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, fileError(path, err)
	}
	st, err := f.Stat()
	if err != nil {
		err = fileError(path, err)
	} else {
		err = t.checkOpened(path, f, st)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}

// checkOpened refuses what was opened by its identity, whatever path led
// there: clawd's own files, a directory, anything but a regular file.
func (t *readFile) checkOpened(path string, f *os.File, st os.FileInfo) error {
	if why := t.env.WS.Guard().OpenWhy(f, st); why != "" {
		return sandbox.ProtectedViolation(path, why)
	}
	if st.IsDir() {
		return tools.Errorf("%s is a directory; use list_dir to see its entries", path)
	}
	if !st.Mode().IsRegular() {
		return tools.Errorf("%s is not a regular file (%s); read_file reads regular files only", path, fileutil.Kind(st.Mode()))
	}
	return nil
}

// readChunk is how much read_file reads between checks of its context
// (max_read_bytes may be up to 256 MiB).
const readChunk = 8 << 20

// readFullCtx is io.ReadFull that stops with ctx's error when ctx ends.
func readFullCtx(ctx context.Context, r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		m, err := io.ReadFull(r, buf[n:min(len(buf), n+readChunk)])
		n += m
		if err != nil {
			if err == io.ErrUnexpectedEOF || err == io.EOF {
				return n, io.ErrUnexpectedEOF
			}
			return n, err
		}
	}
	return n, nil
}

// trimPartialRune drops an incomplete UTF-8 sequence that the size cap cut
// off at the end, so a truncated text file still reads as text.
func trimPartialRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax-1 && i <= len(b); i++ {
		c := b[len(b)-i]
		if c < utf8.RuneSelf {
			return b // ASCII: nothing cut
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			return b
		}
	}
	return b
}

func invalidOffset(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return len(b)
}

// fileError maps a file-system error on path p to what the caller sees:
// escapes become *sandbox.Violation, common failures a plain *ToolError.
func fileError(p string, err error) error {
	if sandbox.IsEscape(err) {
		return sandbox.AsViolation(p, err)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return tools.Errorf("%s: no such file or directory", p)
	case errors.Is(err, fs.ErrPermission):
		return tools.Errorf("%s: permission denied", p)
	case errors.Is(err, syscall.ENOTDIR):
		return tools.Errorf("%s: a component of the path is not a directory", p)
	case errors.Is(err, syscall.ELOOP):
		return tools.Errorf("%s: too many levels of symbolic links", p)
	case errors.Is(err, syscall.EISDIR):
		return tools.Errorf("%s is a directory", p)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return tools.Errorf("%s: %s failed: %v", p, pe.Op, pe.Err)
	}
	return tools.Errorf("%s: %v", p, err)
}
