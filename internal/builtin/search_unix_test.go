//go:build unix

package builtin

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/clawde/clawd/internal/sandbox"
	"github.com/clawde/clawd/internal/tools"
)

// A FIFO is neither searched nor allowed to block the walk (nobody ever
// writes to it); named as the path, it is refused with its kind.
func TestSearchFIFO(t *testing.T) {
	tool, dir := newSearchWS(t, map[string]string{"src/a.txt": "QQ\n"})
	if err := unix.Mkfifo(filepath.Join(dir, "src", "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := callSearch(t, tool, `{"query":"QQ"}`)
	if len(res.Matches) != 1 || res.Matches[0].File != "src/a.txt" {
		t.Errorf("matches = %+v, want only src/a.txt", res.Matches)
	}
	_, err := tool.Call(context.Background(), []byte(`{"query":"QQ","path":"src/fifo"}`))
	var te *tools.ToolError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "src/fifo is a named pipe") {
		t.Errorf("err = %v, want a *ToolError saying it is a named pipe", err)
	}
}

// An ignore file that is clawd's own state (a hard link to the signing
// secret, made by whatever can write the workspace) is not read: its lines
// would otherwise become ignore patterns, and which files a search skips
// would tell a caller what the secret says, one guessed name at a time.
// The guard refuses every file search opens by identity, ignore files too,
// in the walk and in the ancestors of a search root.
func TestSearchIgnoreFileIsNotProtectedState(t *testing.T) {
	tool, dir := newSearchWS(t, map[string]string{
		"state/session.secret": "guess.txt\n",
		"src/guess.txt":        "NEEDLE\n",
		"src/sub/guess.txt":    "NEEDLE\n",
		"top/guess.txt":        "NEEDLE\n",
	})
	env := tool.(*searchTool).env
	secret := filepath.Join(dir, "state", "session.secret")
	sandbox.NewGuard(env.WS, sandbox.ProtectedSet{
		Dirs: []sandbox.Protected{{Path: filepath.Join(dir, "state"), Why: "clawd's data directory"}},
	})
	if !env.WS.Guard().Active() {
		t.Fatal("guard not active")
	}
	for _, link := range []string{"src/.gitignore", "src/.ignore", ".gitignore"} {
		if err := os.Link(secret, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
		for _, args := range []string{`{"query":"NEEDLE"}`, `{"query":"NEEDLE","path":"src/sub"}`} {
			res := callSearch(t, tool, args)
			want := 3
			if strings.Contains(args, "src/sub") {
				want = 1
			}
			if res.TotalMatches != want {
				t.Errorf("%s hard-linked to the secret, search %s: %d matches (%+v), want %d: the secret was read as ignore patterns",
					link, args, res.TotalMatches, hitsOf(res), want)
			}
		}
		os.Remove(filepath.Join(dir, link))
	}
}

// The ignore files above a search root are read along the path as given,
// also where a symlink on it climbs above its own directory (a/link ->
// ../b): that directory cannot be opened from a's handle, and is opened
// from the workspace root instead.
func TestSearchAncestorRulesThroughClimbingLink(t *testing.T) {
	tool, dir := newSearchWS(t, map[string]string{
		"b/.gitignore":    "skip.txt\n",
		"b/sub/keep.txt":  "NEEDLE\n",
		"b/sub/skip.txt":  "NEEDLE\n",
		"a/placeholder.t": "",
	})
	if err := os.Symlink("../b", filepath.Join(dir, "a", "link")); err != nil {
		t.Fatal(err)
	}
	res := callSearch(t, tool, `{"query":"NEEDLE","path":"a/link/sub"}`)
	if got := hitsOf(res); len(got) != 1 || got[0].File != "a/link/sub/keep.txt" {
		t.Errorf("matches %+v; want only a/link/sub/keep.txt (b/.gitignore read through the link)", got)
	}
}
