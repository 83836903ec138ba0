package secrets

import (
	"strings"
	"testing"
	"time"
)

// TestMaskTextLinear: inputs built to make the patterns work hard (every
// tool name and hint repeated, flags that almost match, a long random
// word) are masked in time that grows with their length, not its square:
// a quadratic pattern would take minutes on these 256 KiB.
func TestMaskTextLinear(t *testing.T) {
	const n = 1 << 18
	pieces := []string{
		"mysql -x ", "docker login -q ", "sshpass -x ", "redis-cli -x ", "curl -b x ",
		"Authorization: ", "Cookie:", "X-Api-Key:", "password ", "token ", "API_KEY=", "pass:",
		"-u a:", "://a:b", "--auth -x ", "Ab1/", "k7M/DENG+bPxRf1CYq9Zr2w/",
		`pwd="api_key": `, "password=", "token DB_PASSWORD:",
	}
	for _, p := range pieces {
		in := strings.Repeat(p, n/len(p))
		start := time.Now()
		MaskText(in)
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("MaskText of %d bytes of %q took %v", len(in), p, d)
		}
		t.Logf("%-28q %v", p, time.Since(start))
	}
	// One line of every piece, repeated.
	in := strings.Repeat(strings.Join(pieces, ""), n/200)
	start := time.Now()
	MaskText(in)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("MaskText of %d mixed bytes took %v", len(in), d)
	}
	t.Logf("mixed %v", time.Since(start))
}
