package secrets

import (
	"strings"
	"testing"
	"time"

	"github.com/clawde/clawd/internal/support/cputime"
	"github.com/clawde/clawd/internal/support/race"
)

// TestMaskTextLinear: inputs built to make the patterns work hard (every
// tool name and hint repeated, flags that almost match, a long random
// word) are masked in time that grows with their length, not its square.
//
// The test compares each input at 256 KiB with the same input at 16 KiB
// rather than holding either to a wall-clock bound, so it says the same on
// a fast machine and a loaded one: linear work grows 16 times, quadratic
// work 256 times; more than 64 times fails. Times under 200 ms are too small
// to compare and pass. Under the race detector, which slows large inputs
// more than small ones, the test does not run.
func TestMaskTextLinear(t *testing.T) {
	if race.Enabled {
		t.Skip("time ratios are distorted under the race detector")
	}
	const n, scale = 1 << 18, 16
	pieces := []string{
		"mysql -x ", "docker login -q ", "sshpass -x ", "redis-cli -x ", "curl -b x ",
		"Authorization: ", "Cookie:", "X-Api-Key:", "password ", "token ", "password is \"", "secret was '", "pwd is ", "API_KEY=", "pass:",
		"-u a:", "://a:b", "--auth -x ", "Ab1/", "k7M/DENG+bPxRf1CYq9Zr2w/",
		`pwd="api_key": `, "password=", "token DB_PASSWORD:",
		"-----BEGIN RSA PRIVATE KEY-----\n", "-----BEGIN X PRIVATE KEY-----", "vault login -x ", "vault login ",
		"sqlcmd -x ", "bcp -P", "eyJa.eyJb.", "eyJ.", "?sig=", "&sig=a", "glpat-", "AKIA", "SG.a.", "://a:b@@",
		"MNEMONIC=", "a:b@c:", "a:b@", "@c:", "curl -U a:", "://h:1/@", "://h:1/a?@",
		"MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.", ".abcdef.", "a_pass=", "--x-pass ", "xPass: '", "pass=a.b",
		"htpasswd -b ", "htpasswd ", "openssl passwd a ", "echo a | sudo -S ", "echo a:b | chpasswd ", "chpasswd <<< a:b", "net use \\\\a ", "dscl . -passwd ",
		"ldapsearch -w ", "7z -p", "smbclient -U a%", "http -a a:", "gh secret ", "sqlplus a/", "thin:a/", "ConvertTo-SecureString ",
		"sudo <<< ", "<<< a", "yes a | passwd ", "curl -sSfu ", "kubectl secret --from-literal=a=", "?key=", "isql a b ",
		"identified by ", "user a using ", "a:5432:b:c:", "*:*:", "plink -pw ",
		`:\/\/a:b@`, `"https://a b `, "<password>a</", "<password>", "password := ",
		"name: a_key\nvalue: ", `"name":"a_pass","value":`, "vault kv put a b=c ", "security add-generic-password -w ",
		"psk=", "--account-key ", "Set-Cookie: a=b; c=", "mc alias set a ", "poetry config http-basic.a ",
		"wpa_passphrase a ", "xfreerdp /p:", "ssh-keygen -N ", "az keyvault secret set --value ", "mongo -p ",
		"ConvertTo-SecureString -String ", "<<< a:b", "a@b:c@d:", "https:\\/\\/a:b@c ",
	}
	inputs := map[string]func(size int) string{}
	for _, p := range pieces {
		inputs[p] = func(size int) string { return strings.Repeat(p, size/len(p)) }
	}
	// One line of every piece, repeated.
	all := strings.Join(pieces, "")
	inputs["mixed"] = func(size int) string { return strings.Repeat(all, size/len(all)) }

	for name, make := range inputs {
		small, large := make(n/scale), make(n)
		// Best of three each, so that a preemption or a collection in
		// one run does not decide.
		smallTime, largeTime := cputime.Least(3, func() { MaskText(small) }), cputime.Least(3, func() { MaskText(large) })
		t.Logf("%-28q %d bytes %v, %d bytes %v", name, len(small), smallTime, len(large), largeTime)
		if largeTime > 200*time.Millisecond && largeTime > 4*scale*smallTime {
			t.Errorf("MaskText of %q: %d bytes took %v, %d bytes %v: more than %dx for %dx the input",
				name, len(small), smallTime, len(large), largeTime, 4*scale, scale)
		}
	}
}
