package clients

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// These need no client: they drive `clawd install` itself.

func TestInstallUsageErrors(t *testing.T) {
	w := newWorld(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"install"}, "needs one client"},
		{[]string{"install", "emacs"}, `unknown client "emacs": use one of claude-code, claude-desktop, cursor, opencode, vscode`},
		{[]string{"install", "cursor", "--project", "--user"}, "exclude each other"},
		{[]string{"install", "cursor", "--transport", "http"}, `--transport "http"`},
		{[]string{"install", "opencode", "--hook"}, "--hook is for claude-code only"},
		{[]string{"install", "claude-desktop", "--project"}, "has no project config"},
	} {
		_, stderr, code := w.Run(tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
	// A transport the client cannot use is a usage error, as --hook for
	// another client is, and says what to use instead.
	_, stderr, code := w.Run("install", "vscode", "--transport", "tcp_loopback")
	if code != 2 || !strings.Contains(stderr, "use --transport unix_socket") {
		t.Errorf("vscode over HTTP: exit %d %q", code, stderr)
	}
	// Outside a project, install asks which file is meant.
	plain := filepath.Join(w.Home, "notaproject")
	os.MkdirAll(plain, 0o755)
	_, stderr, code = w.Run("install", "cursor", "--workspace", plain)
	if code != 2 || !strings.Contains(stderr, "pass --project") {
		t.Errorf("outside a project: exit %d %q", code, stderr)
	}
}

func TestInstallDryRunChangesNothing(t *testing.T) {
	w := newWorld(t)
	cfg := filepath.Join(w.WS, ".vscode", "mcp.json")
	orig := "// mine\n{\n\t\"servers\": {\n\t\t\"x\": {\"command\": \"x\"},\n\t},\n}\n"
	w.write(cfg, orig)
	stdout, _, code := w.Run("install", "vscode", "--transport", "unix_socket", "--dry-run")
	if code != 0 || !strings.Contains(stdout, "--- "+cfg) || !strings.Contains(stdout, "+\t\t\"clawd\": {") {
		t.Fatalf("dry-run diff (exit %d):\n%s", code, stdout)
	}
	if b, _ := os.ReadFile(cfg); string(b) != orig {
		t.Fatal("dry-run changed the file")
	}
	if _, err := os.Stat(cfg + ".clawd-backup"); err == nil {
		t.Fatal("dry-run wrote a backup")
	}
	// No credential was issued either.
	if out, _, _ := w.Run("token", "list", "--json"); strings.Contains(out, `"local"`) {
		t.Fatalf("dry-run issued a credential: %s", out)
	}
	stdout, _, _ = w.Run("install", "vscode", "--transport", "unix_socket")
	if !strings.Contains(stdout, "original kept in "+cfg+".clawd-backup") {
		t.Fatalf("install output: %s", stdout)
	}
	stdout, _, _ = w.Run("install", "vscode", "--transport", "unix_socket")
	if !strings.Contains(stdout, "nothing to change") {
		t.Fatalf("second install: %s", stdout)
	}
	if out, _, _ := w.Run("token", "list", "--json"); strings.Count(out, `"kind": "local"`)+strings.Count(out, `"kind":"local"`) != 1 {
		t.Fatalf("want exactly one local credential after two installs: %s", out)
	}
	stdout, _, _ = w.Run("uninstall", "vscode", "--dry-run")
	if !strings.Contains(stdout, "-\t\t\"clawd\": {") {
		t.Fatalf("uninstall dry-run:\n%s", stdout)
	}
	w.Run("uninstall", "vscode")
	if b, _ := os.ReadFile(cfg); string(b) != orig {
		t.Fatalf("not restored:\n%s", b)
	}
}

// TestTokenHeader: the headers helper hands out the credential only when
// the workspace's own HTTP daemon holds the entry's address. Claude Code
// sends what it prints to that address whether or not clawd runs there,
// and while it does not, any local user may listen on the port.
func TestTokenHeader(t *testing.T) {
	w := newWorld(t)
	w.Run("token", "issue", "--client", "cc")
	out, stderr, code := w.Run("token", "header", "--client", "cc")
	if code != 1 || strings.Contains(out, "cdc1_") || !strings.Contains(stderr, "no tcp_loopback daemon") {
		t.Fatalf("token header without a daemon: exit %d %q %q; want exit 1 and no credential", code, out, stderr)
	}
	// Someone else's server on the port, answering /health as a clawd would.
	squat, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", w.port))
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 16)
	srv := &http.Server{Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("Authorization")
		fmt.Fprintf(rw, `{"status":"ok","pid":%d}`, os.Getpid())
	})}
	go srv.Serve(squat)
	out, stderr, code = w.Run("token", "header", "--client", "cc")
	srv.Close()
	if code != 1 || strings.Contains(out, "cdc1_") {
		t.Fatalf("token header with another server on the port: exit %d %q %q; want exit 1 and no credential", code, out, stderr)
	}
	close(got)
	for a := range got {
		if a != "" {
			t.Fatalf("the credential check sent %q", a)
		}
	}
	w.Serve("--transport", "tcp_loopback")
	out, stderr, code = w.Run("token", "header", "--client", "cc")
	if code != 0 || !strings.HasPrefix(strings.TrimSpace(out), "{") || !strings.Contains(out, `"Authorization": "Bearer cdc1_`) {
		t.Fatalf("token header: exit %d %q %q", code, out, stderr)
	}
	_, stderr, code = w.Run("token", "header", "--client", "oc")
	if code != 1 || !strings.Contains(stderr, "clawd token issue --client oc") {
		t.Fatalf("missing credential: exit %d %q", code, stderr)
	}
	_, _, code = w.Run("token", "header")
	if code != 2 {
		t.Fatalf("no --client: exit %d", code)
	}
}

// TestInstallHTTPEntryUsesBindAddr: an HTTP entry names the address the
// daemon listens on. With bind_addr = "::1" it named 127.0.0.1, an address
// the daemon does not hold, where another user's process could listen and
// be handed the credential by the client.
func TestInstallHTTPEntryUsesBindAddr(t *testing.T) {
	w := newWorld(t)
	w.write(w.ConfigFile(), fmt.Sprintf("port = %d\nbind_addr = \"::1\"\n", w.port))
	stdout, stderr, code := w.Run("install", "claude-code", "--transport", "tcp_loopback", "--dry-run")
	want := fmt.Sprintf(`"url": "http://[::1]:%d/mcp"`, w.port)
	if code != 0 || !strings.Contains(stdout, want) {
		t.Fatalf("install with bind_addr ::1: exit %d, want %s in:\n%s%s", code, want, stdout, stderr)
	}
}
