//go:build unix

package upstream

import (
	"strings"
	"testing"

	"github.com/clawde/clawd/internal/support/proc"
)

// The stderr ring keeps a tail that may begin inside a configured secret
// (its start overwritten) or end inside one (the rest not written yet):
// what is left of the value is not the value, so masking the whole value
// alone would show all of it but a few bytes. Logs masks such a piece at
// either edge too.
func TestLogsMaskSecretCutByRing(t *testing.T) {
	t.Parallel()
	const secret = "correct-horse-battery-staple"
	m, _ := newTestManager(t, Options{LookupEnv: func(string) (string, bool) { return secret, true }})
	cfg := fake("cut")
	cfg.Env = map[string]string{"PASS_PHRASE_VAR": "${S}"}
	for _, tc := range []struct{ write, leak string }{
		// The ring keeps the last 24 bytes: the secret's first 8 are gone.
		{"0123456789 value=" + secret + " ok\n", secret[8:]},
		// The ring ends 10 bytes into the secret.
		{"some line\nlast: " + secret[:10], secret[:10]},
	} {
		ring := proc.NewRing(24)
		ring.Write([]byte(tc.write))
		s := newServer(m, cfg, ring)
		if got := string(s.logs()); strings.Contains(got, tc.leak[:8]) {
			t.Errorf("logs %q show a piece of the secret", got)
		}
	}
}
