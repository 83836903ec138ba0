package main

import (
	"fmt"
	"strings"

	"github.com/clawde/clawd/internal/builtin"
	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/config"
	"github.com/clawde/clawd/internal/store"
)

// trustState is what the trust registry says about one entity, for
// `clawd tools` and `clawd doctor`.
type trustState struct {
	Entity  string `json:"entity"`
	Row     string `json:"row,omitempty"` // the matching row: the entity itself or KIND:*
	Level   int    `json:"level"`
	Problem string `json:"problem,omitempty"`
	Fix     string `json:"fix,omitempty"`
}

// explainTrust looks up entity in the registry and says, when the entity
// can call nothing, why and what to run. It reads the same registry and
// config switches as the daemon; it does not know about upstream supply
// checks, so it may say nothing when those hide every tool.
func explainTrust(db *store.DB, entity string, cfg *config.Config) trustState {
	st := trustState{Entity: entity}
	entry, ok, err := db.Lookup(entity)
	if err != nil {
		st.Problem = fmt.Sprintf("cannot read the trust registry: %v", err)
		st.Fix = "check the data directory's permissions and free space"
		return st
	}
	kind, _, _ := strings.Cut(entity, ":")
	if !ok {
		st.Problem = fmt.Sprintf("entity %s has no trust row (nor %s:*): every tool call is refused and tools/list is empty", entity, kind)
		st.Fix = fmt.Sprintf("clawd trust set %s 2   (1 = read tools, 2 adds write_file and bash)", entity)
		return st
	}
	st.Row, st.Level = entry.Entity, entry.Level
	if cfg.PolicyStubMode {
		return st
	}
	if st.Level == 0 && !anyAllowed(entry.Perms) {
		st.Problem = fmt.Sprintf("entity %s has trust level 0 (row %s): it may call no tool", entity, entry.Entity)
		st.Fix = fmt.Sprintf("clawd trust set %s 1   (or 2 for write_file and bash)", entity)
		return st
	}
	on := 0
	for _, name := range builtin.Names() {
		if cfg.ToolEnabled(name) && entry.Perms[name] != chain.PermDeny {
			on++
		}
	}
	if on == 0 {
		st.Problem = fmt.Sprintf("every built-in tool is switched off in [tools] or denied in row %s", entry.Entity)
		st.Fix = "set the tools you need to true in the config's [tools] table, or clawd trust set with --allow"
	}
	return st
}

// anyAllowed reports whether perms grant a tool whatever the level: an
// allow, or a binding (chain.Evaluate allows a bound upstream tool at any
// level).
func anyAllowed(perms map[string]string) bool {
	for _, p := range perms {
		if p == chain.PermAllow || p == chain.PermBind {
			return true
		}
	}
	return false
}
