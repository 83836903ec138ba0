package builtin

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/sandbox"
	"github.com/clawde/clawd/internal/support/fileutil"
	"github.com/clawde/clawd/internal/tools"
)

// search: find a literal or regexp in the workspace's text files, like
// ripgrep. The decisions (docs/search.md has the long form):
//   - literal by default, Go RE2 with is_regex; case-insensitive unless
//     case_sensitive; matches never span lines;
//   - every occurrence is a match (one entry per occurrence, non-overlapping,
//     leftmost first), and total_matches counts them all, also past
//     max_results;
//   - the walk honours .gitignore (nested, negation, directory and anchored
//     patterns), .ignore and .git/info/exclude, skips .git, symlinks,
//     binary files (NUL in the first 8 KiB) and files over
//     the size limit (Limits.MaxSearchFileMB), and searches hidden files;
//   - matches are sorted by file (byte order), line, column.

const (
	defaultSearchResults = 50
	// maxSearchResults bounds max_results: with texts of up to ~512 bytes
	// this keeps a result below a few MiB.
	maxSearchResults = 10000
)

type searchTool struct {
	env  *Env
	spec tools.Spec
}

// NewSearch returns the search tool.
func NewSearch(env *Env) tools.Tool {
	return &searchTool{env: env, spec: tools.Spec{
		Name:  "search",
		Title: "Search files",
		Description: "Search the workspace's text files for a literal string (default) or a Go RE2 regular expression (is_regex), " +
			"case-insensitively unless case_sensitive. Like ripgrep: honours .gitignore/.ignore, skips .git, binary files and symlinks; " +
			"searches hidden files. glob filters files like rg -g ('*.go' matches base names at any depth, 'src/**/*.rs' paths " +
			"relative to the search root, '!vendor/' excludes). Returns up to max_results matches (file, 1-based line, 1-based byte col, " +
			"line text) sorted by file and line; total_matches counts all.",
		Permission:   tools.PermRead,
		InputSchema:  compact(searchInputSchema),
		OutputSchema: compact(searchOutputSchema),
		PathArgs:     []string{"path"},
		StateAccess:  sandbox.AccessRead,
	}}
}

func (t *searchTool) Spec() *tools.Spec { return &t.spec }

type searchArgs struct {
	Query         *string `json:"query"`
	Path          string  `json:"path"`
	Glob          string  `json:"glob"`
	IsRegex       bool    `json:"is_regex"`
	CaseSensitive bool    `json:"case_sensitive"`
	MaxResults    *int    `json:"max_results"`
}

// SearchMatch is one match in search's output.
type SearchMatch struct {
	File string `json:"file"` // relative to the workspace root, "/"-separated
	Line int    `json:"line"` // 1-based
	Col  int    `json:"col"`  // 1-based byte column of the match start
	Text string `json:"text"` // the line, without its line ending (see lineText)
}

// SearchResult is search's output object.
type SearchResult struct {
	Matches      []SearchMatch `json:"matches"`
	TotalMatches int           `json:"total_matches"`
	Truncated    bool          `json:"truncated"`
}

func (t *searchTool) Call(ctx context.Context, raw jsontext.Value) (any, error) {
	var a searchArgs
	if err := tools.DecodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if a.Query == nil {
		return nil, &tools.ArgError{Msg: `"query" is required`}
	}
	if *a.Query == "" {
		return nil, &tools.ArgError{Msg: `"query" must not be empty`}
	}
	if n := len(*a.Query); n > maxQueryBytes {
		return nil, &tools.ArgError{Msg: fmt.Sprintf(`"query" is %d bytes; the limit is %d bytes`, n, maxQueryBytes)}
	}
	k := defaultSearchResults
	if a.MaxResults != nil {
		k = *a.MaxResults
		if k < 1 || k > maxSearchResults {
			return nil, &tools.ArgError{Msg: fmt.Sprintf(`"max_results" must be between 1 and %d (got %d)`, maxSearchResults, k)}
		}
	}
	// The whole search, compiling included, runs under tool_timeout_ms;
	// parent is the caller's context, whose end means "cancelled".
	lim := t.env.limits()
	timeout := lim.DefaultTimeout
	if timeout <= 0 {
		timeout = DefaultLimits().DefaultTimeout
	}
	parent := ctx
	ctx, stop := context.WithTimeout(ctx, timeout)
	defer stop()
	m, err := newMatcher(ctx, *a.Query, a.IsRegex, a.CaseSensitive)
	if err != nil {
		return nil, err
	}
	g, err := parseGlob(a.Glob)
	if err != nil {
		return nil, err
	}
	rel, err := t.env.WS.Rel(a.Path)
	if err != nil {
		return nil, err
	}
	maxMB := lim.MaxSearchFileMB
	if maxMB <= 0 {
		maxMB = DefaultLimits().MaxSearchFileMB
	}
	col := &collector{k: k}
	w := newWalker(ctx, m, g, maxMB<<20, col)
	w.guard = t.env.WS.Guard()
	if err := t.searchRoot(w, a.Path, rel); err != nil {
		return nil, err
	}
	if err := parent.Err(); err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, tools.Errorf("search stopped at the time limit of %d ms (tool_timeout_ms) before it was done, so no result is given: "+
			"narrow it with path or glob, or use a literal or a simpler pattern", timeout.Milliseconds())
	}
	matches := col.result()
	total := int(w.total.Load())
	return &SearchResult{Matches: matches, TotalMatches: total, Truncated: total > len(matches)}, nil
}

// searchRoot runs the walk from the search root rel (as given: arg), a
// directory or a single file.
func (t *searchTool) searchRoot(w *walker, arg, rel string) error {
	ws := t.env.WS
	if rel == "." {
		w.run(&dirNode{root: ws.Root, shared: true})
		return nil
	}
	fi, err := ws.Root.Stat(rel)
	if err != nil {
		return fileError(displayPath(arg), err)
	}
	switch {
	case fi.IsDir():
		// Not OpenRoot(rel): the directory may have been swapped for a
		// named pipe since the Stat, and that open would block.
		r, err := sandbox.OpenDir(ws.Root, rel)
		if err != nil {
			return fileError(displayPath(arg), err)
		}
		if g := ws.Guard(); g.Active() {
			if st, err := r.Stat("."); err == nil {
				if why := g.ObjectWhy(st); why != "" {
					r.Close()
					return sandbox.ProtectedViolation(arg, why)
				}
			}
		}
		w.run(&dirNode{root: r, rel: rel, rules: ancestorRules(ws.Root, rel, ws.Guard()), depth: strings.Count(rel, "/") + 1})
		return nil
	case fi.Mode().IsRegular():
		return t.searchOneFile(w, arg, rel)
	}
	return tools.Errorf("%s is %s; search takes a directory or a regular file", arg, fileutil.Kind(fi.Mode()))
}

func displayPath(p string) string {
	if p == "" {
		return "."
	}
	return p
}

// searchOneFile searches a file named explicitly as the search root. As
// with ripgrep, ignore rules and the glob do not apply to it; binary and
// oversized files are reported rather than skipped silently.
func (t *searchTool) searchOneFile(w *walker, arg, rel string) error {
	f, err := t.env.WS.Root.OpenFile(rel, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return fileError(arg, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fileError(arg, err)
	}
	if why := t.env.WS.Guard().OpenWhy(f, fi); why != "" {
		return sandbox.ProtectedViolation(arg, why)
	}
	if !fi.Mode().IsRegular() {
		return tools.Errorf("%s is %s; search takes a directory or a regular file", arg, fileutil.Kind(fi.Mode()))
	}
	if fi.Size() > w.maxSize {
		return tools.Errorf("%s is larger than the search limit of %d MiB; read parts of it with read_file", arg, w.maxSize>>20)
	}
	if fi.Size() == 0 {
		return nil // nothing to match; not read, as in the walk (a pseudo file's read may never end)
	}
	var buf []byte
	data, err := readText(f, &buf, fi.Size(), w.maxSize)
	switch {
	case err == errTooLarge:
		return tools.Errorf("%s is larger than the search limit of %d MiB", arg, w.maxSize>>20)
	case err == errBinary:
		return tools.Errorf("%s is a binary file (NUL byte in its first %d KiB); search reads text files only", arg, binarySniff>>10)
	case err != nil:
		return fileError(arg, err)
	}
	st := &workerState{w: w}
	st.searchData(rel, data)
	return nil
}

// ancestorRules loads the ignore files of the directories from the
// workspace root down to the parent of rel, so that searching a
// subdirectory honours the same rules as searching the whole workspace.
// Nothing above the workspace root is read, nor an ignore file that is
// clawd's state (g).
//
// Each directory is opened from its parent's handle by one name, so a root
// n levels deep costs n opens, not n lookups of up to n components each
// (4 s for 1,023 levels). A symlink whose target climbs above its own
// directory cannot be followed from that handle; that directory is opened
// by its path from the workspace root instead, and if even that fails
// (gone, or more symlinks than os.Root follows) the ancestors below it are
// not read: opening the search root itself reports the problem.
func ancestorRules(root *os.Root, rel string, g *sandbox.Guard) ignoreRules {
	var rules ignoreRules
	parts := strings.Split(rel, "/")
	dir := ""
	cur := root
	defer func() {
		if cur != root {
			cur.Close()
		}
	}()
	for _, p := range parts[:len(parts)-1] {
		rules = extendRules(rules, cur, dir, g)
		dir = joinRel(dir, p)
		next, err := sandbox.OpenDir(cur, p)
		if err != nil {
			if next, err = sandbox.OpenDir(root, dir); err != nil {
				return rules
			}
		}
		if cur != root {
			cur.Close()
		}
		cur = next
	}
	return extendRules(rules, cur, dir, g)
}

// extendRules adds the ignore files of the directory open as d (rel, its
// path from the workspace root) to rules; see loadIgnoreFiles.
func extendRules(rules ignoreRules, d *os.Root, rel string, g *sandbox.Guard) ignoreRules {
	entry := func(name string) (fs.FileMode, bool) {
		fi, err := d.Lstat(name)
		if err != nil {
			return 0, false
		}
		return fi.Mode(), true
	}
	h := ignoreFiles{guard: g}
	if m, ok := entry(".git"); ok {
		h.git, h.gitIsDir = true, m.IsDir()
	}
	if m, ok := entry(".gitignore"); ok {
		h.gitignore = m.IsRegular()
	}
	if m, ok := entry(".ignore"); ok {
		h.ignore = m.IsRegular()
	}
	return h.apply(rules, d, "", rel)
}
