//go:build linux || darwin

// Package transport_e2e runs the clawd binary end to end over its network
// transports: `clawd serve` on a unix socket and on loopback HTTP, `clawd
// connect`, the CLI client and token rotation. Each test gets its own HOME
// and XDG directories, so nothing touches the user's files.
package transport_e2e

import (
	"os"
	"testing"

	"github.com/clawde/clawd/test/clawdtest"
)

// clawdBin is the binary under test, built once by TestMain.
var clawdBin string

func TestMain(m *testing.M) { os.Exit(clawdtest.Main(m, &clawdBin)) }
