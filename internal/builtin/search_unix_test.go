//go:build unix

package builtin

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/clawde/clawd/internal/tools"
)

// A FIFO is neither searched nor allowed to block the walk (nobody ever
// writes to it); named as the path, it is refused with its kind.
func TestSearchFIFO(t *testing.T) {
	tool, dir := newSearchWS(t, map[string]string{"src/a.txt": "QQ\n"})
	if err := syscall.Mkfifo(filepath.Join(dir, "src", "fifo"), 0o644); err != nil {
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
