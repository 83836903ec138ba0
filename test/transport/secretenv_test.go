//go:build linux

package transport_e2e

import (
	"os"
	"strings"
	"testing"

	"github.com/clawde/clawd/test/clawdtest"
)

// environProbe is a bash command that prints clawd's kernel-side
// environment (/proc/<clawd>/environ, readable by any process of the same
// user) and the name of every readable /proc/*/environ holding one of the
// values.
func environProbe(values ...string) string {
	grep := "grep -l -F"
	for _, v := range values {
		grep += " -e " + v
	}
	return `tr '\0' '\n' < /proc/$PPID/environ; echo ---; ` + grep + ` /proc/[0-9]*/environ 2>/dev/null; echo end`
}

// TestSecretsNotInProcEnviron: CLAWDE_SESSION_SECRET and CLAWD_TOKEN given
// to clawd serve are gone from the environment the kernel shows for its
// pid (os.Unsetenv alone leaves them there), yet the secret is the key in
// use: no secret file is generated and tokens issued with it verify.
func TestSecretsNotInProcEnviron(t *testing.T) {
	e := newEnv(t)
	secret := "procenv-secret-" + strings.Repeat("k", 40)
	tokVal := "procenv-token-" + strings.Repeat("t", 30)
	e.Extra = []string{"CLAWDE_SESSION_SECRET=" + secret, "CLAWD_TOKEN=" + tokVal}
	d := e.serve("--transport", "tcp_loopback", "--port", "0")
	st := e.State("tcp")
	if st.PID != d.Cmd.Process.Pid {
		t.Errorf("state file pid %d, started pid %d: the re-exec must keep the pid", st.PID, d.Cmd.Process.Pid)
	}
	if _, err := os.Stat(e.Home + "/.local/share/clawde/session.secret"); !os.IsNotExist(err) {
		t.Errorf("a secret file was generated: the environment's secret was lost in the re-exec (%v)", err)
	}
	// The token (HMAC with the secret) authenticates: initialize succeeds.
	s := clawdtest.NewHTTP(t, st.Addr, clawdtest.ReadToken(t, st.TokenFile))
	s.Initialize(initMsg)
	cmd := environProbe(secret, tokVal)
	code, body := s.Post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bash","arguments":{"command":` + jsonString(cmd) + `}}}`)
	if code != 200 || !strings.Contains(body, `PATH=`) || !strings.Contains(body, "end") {
		t.Fatalf("bash could not read /proc/$PPID/environ: HTTP %d %s", code, body)
	}
	for _, v := range []string{secret, tokVal, "CLAWDE_SESSION_SECRET", "CLAWD_TOKEN", "/proc/"} {
		if strings.Contains(body, v) {
			t.Errorf("bash finds %q in a process environment: %s", v, body)
		}
	}

	// Over stdio the re-exec keeps the host's pipes: the session works.
	e2 := newEnv(t)
	e2.Extra = []string{"CLAWD_TOKEN=" + tokVal}
	in := initMsg + "\n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bash","arguments":{"command":` + jsonString(environProbe(tokVal)) + `}}}` + "\n"
	out, errOut, exit := e2.RunStdin(in, "serve")
	if exit != 0 || !strings.Contains(out, `"id":2`) || !strings.Contains(out, "PATH=") {
		t.Fatalf("stdio serve with CLAWD_TOKEN set: exit %d\n%s\n%s", exit, out, errOut)
	}
	if strings.Contains(out, tokVal) || strings.Contains(out, "CLAWD_TOKEN") {
		t.Errorf("stdio: bash finds the token: %s", out)
	}
}

func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
