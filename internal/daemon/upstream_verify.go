package daemon

import (
	"fmt"
	"strings"

	"github.com/clawde/clawd/internal/store"
	"github.com/clawde/clawd/internal/upstream"
)

// UnverifiedReason is the word every refusal of an unapproved stdio server
// starts with, in its last error and its audit row.
const UnverifiedReason = "supply_chain_unverified"

// VerifyUpstream returns the check a stdio server must pass before every
// spawn (upstream.Options.VerifyLaunch): the SHA-256 of the executable
// (hashed through the descriptor that is then executed) must be on the
// supply-chain allowlist for the server, and what an interpreter or npx
// runs must be pinned for it (the script's SHA-256, the package's version
// and integrity). A command whose payload cannot be pinned (`npx -y pkg`,
// uvx, `python -m`) is refused whatever the allowlist says. The error
// names the exact command, what is not approved, and the `clawd mcp allow`
// line that approves exactly what was checked. A refusal is audited by
// the daemon as the manager's refuse event (upstream_audit.go); `clawd mcp
// test` records nothing.
func VerifyUpstream(db *store.DB) func(server string, l upstream.Launch) error {
	return func(server string, l upstream.Launch) error { return checkLaunch(db, server, l) }
}

func checkLaunch(db *store.DB, server string, l upstream.Launch) error {
	cmd := upstream.QuoteCommand(l.Command)
	if l.Unpinned != "" {
		return fmt.Errorf("%s: the command %s cannot be approved, so it was not started: %s", UnverifiedReason, cmd, l.Unpinned)
	}
	pins := LaunchPins(l)
	execOK, pinned, err := db.LaunchAllowed(server, l.ExecSHA256, pins)
	if err != nil {
		return fmt.Errorf("%s: the supply-chain allowlist could not be read, so %s was not started: %v", UnverifiedReason, cmd, err)
	}
	var missing []string
	if !execOK {
		missing = append(missing, fmt.Sprintf("executable %s (sha256 %s)", upstream.QuoteCommand([]string{l.Exec}), l.ExecSHA256))
	}
	for i, p := range pins {
		if pinned[i] {
			continue
		}
		switch p.Kind {
		case store.PinScript:
			missing = append(missing, fmt.Sprintf("script %s (sha256 %s)", upstream.QuoteCommand([]string{l.Script}), l.ScriptSHA256))
		case store.PinPackage:
			missing = append(missing, fmt.Sprintf("package %s (integrity %s, from %s)", l.Package, l.Integrity, upstream.QuoteCommand([]string{l.Lockfile})))
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("%s: the command %s was not started: %s not approved for server %s; if you trust it: %s",
		UnverifiedReason, cmd, strings.Join(missing, " and "), server, l.AllowLine(server))
}

// LaunchPins turns what a launch runs into the rows `clawd mcp allow`
// stores beside the executable's hash.
func LaunchPins(l upstream.Launch) []store.PinRow {
	var pins []store.PinRow
	if l.Script != "" {
		pins = append(pins, store.PinRow{Kind: store.PinScript, Digest: l.ScriptSHA256, Detail: l.Script})
	}
	if l.Package != "" {
		pins = append(pins, store.PinRow{Kind: store.PinPackage, Subject: l.Package, Digest: l.Integrity, Detail: l.Lockfile})
	}
	return pins
}
