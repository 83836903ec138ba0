package builtin

import (
	"context"
	"slices"
	"testing"

	"github.com/clawde/clawd/internal/config"
	"github.com/clawde/clawd/internal/tools"
)

// TestProviderContract: the built-in provider is of built-in origin (the
// supply-chain step passes it for that, not for a missing path), its
// lifecycle is the trivial one it documents, and Names are its five tools
// in order, the names clawd init's template and [tools] know.
func TestProviderContract(t *testing.T) {
	var p tools.Provider = Builtin(&Env{})
	if p.Origin() != tools.BuiltinOrigin() || p.ID() != BuiltinProviderID {
		t.Errorf("origin %v id %q", p.Origin(), p.ID())
	}
	if err := p.Start(context.Background()); err != nil {
		t.Error(err)
	}
	if h := p.Health(); h.Status != tools.StatusReady || h.LastError != nil {
		t.Errorf("health %+v", h)
	}
	p.OnChange(func() { t.Error("the built-in tool list changed") })()
	if err := p.Stop(context.Background()); err != nil {
		t.Error(err)
	}
	want := []string{"bash", "read_file", "write_file", "list_dir", "search"}
	if got := Names(); !slices.Equal(got, want) {
		t.Errorf("Names = %v, want %v", got, want)
	}
	if l := DefaultLimits(); l.MaxReadBytes != config.Default().MaxReadBytes ||
		l.DefaultTimeout.Milliseconds() != int64(config.Default().ToolTimeoutMS) {
		t.Errorf("DefaultLimits %+v does not follow config.Default()", l)
	}
}
