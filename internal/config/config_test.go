package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// A config binding
// 0.0.0.0 fails validation with an error naming the invariant.
func Test_binding_rejects_0000(t *testing.T) {
	for _, addr := range []string{"0.0.0.0", "::", "[::]", "192.168.1.10", "10.0.0.1", "example.com", "127.0.0.1.nip.io", ""} {
		c := Default()
		c.Transport = TransportTCPLoopback
		c.BindAddr = addr
		err := c.Validate()
		if err == nil {
			t.Errorf("bind_addr %q accepted", addr)
			continue
		}
		var be *BindError
		if !errors.As(err, &be) || !strings.Contains(err.Error(), "bind_0000_rejected") {
			t.Errorf("bind_addr %q: error %q does not name bind_0000_rejected", addr, err)
		}
	}
	for _, addr := range []string{"127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"} {
		c := Default()
		c.BindAddr = addr
		if err := c.Validate(); err != nil {
			t.Errorf("loopback bind_addr %q rejected: %v", addr, err)
		}
	}
	// From a file, too.
	if _, err := Parse([]byte("transport = \"tcp_loopback\"\nbind_addr = \"0.0.0.0\"\n")); err == nil || !strings.Contains(err.Error(), "bind_0000_rejected") {
		t.Errorf("Parse with 0.0.0.0: %v", err)
	}
}

func TestTemplateIsTheDefault(t *testing.T) {
	c, err := Parse([]byte(Template))
	if err != nil {
		t.Fatalf("the init template does not parse: %v", err)
	}
	d := Default()
	c.Tools, d.Tools = nil, nil // [tools] is an empty table in the template
	if !reflect.DeepEqual(c, d) {
		t.Errorf("template config = %+v\ndefault = %+v", c, d)
	}
}

// Every key of the init template is commented out, every key of Config is
// in it, and it points to nothing the user does not have.
func TestTemplateCommentsEveryKey(t *testing.T) {
	for i, line := range strings.Split(Template, "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			t.Errorf("line %d is not a comment: %q", i+1, line)
		}
		for _, ref := range []string{"ADR", "spec", "DESIGN", "HookContract", "section"} {
			if strings.Contains(line, ref) {
				t.Errorf("line %d refers to %q, a document the user does not have: %q", i+1, ref, line)
			}
		}
	}
	typ := reflect.TypeOf(Config{})
	for i := 0; i < typ.NumField(); i++ {
		key := typ.Field(i).Tag.Get("toml")
		if key == "tools" {
			key = "[tools]"
		} else {
			key += " = "
		}
		if !strings.Contains(Template, "# "+key) {
			t.Errorf("key %s is not in the template", key)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{`trasport = "stdio"`, "unknown key trasport"},
		{"[tools]\nbash = \"no\"", "line 2, column 8: tools.bash: expected true or false, got a TOML string"},
		{"[tools]\nbogus_key = 1", "line 2, column 13: tools.bogus_key: expected true or false, got a TOML integer"},
		{`port = "x"`, "port: expected an integer, got a TOML string"},
		{`transport = "tcp"`, `transport = "tcp"`},
		{`port = 70000`, "port = 70000"},
		{`tool_timeout_ms = 0`, "tool_timeout_ms"},
		{`max_read_bytes = -1`, "max_read_bytes"},
		{`max_concurrency = 0`, "max_concurrency"},
		{`audit_sync = "sometimes"`, `audit_sync = "sometimes"`},
		{`upstream_tool_name_max = 65`, "upstream_tool_name_max = 65: must be 16..64"},
		{`upstream_tool_name_max = 15`, "upstream_tool_name_max = 15: must be 16..64"},
		{`policy_stub_mode = "yes"`, "line 1"},
		{`transport = `, "line 1"},
		{`socket_path = "/tmp/a\u0000b"`, `socket_path = "/tmp/a\x00b": must be a path without a NUL character`},
		{`token_path = "\u0000"`, "token_path"},
	}
	for _, tt := range tests {
		_, err := Parse([]byte(tt.in))
		if err == nil {
			t.Errorf("Parse(%q) succeeded", tt.in)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) = %q, want it to mention %q", tt.in, err, tt.want)
		}
	}
}

// TestCheckTools: [tools] keys are checked against the tools that exist
// (the registry's names, passed in), no longer against a list in config;
// an unknown one is named together with the known ones.
func TestCheckTools(t *testing.T) {
	known := []string{"bash", "read_file", "write_file", "list_dir", "search"}
	for _, tc := range []struct{ in, want string }{
		{"[tools]\nbsh = false", "[tools] bsh: unknown tool; known tools are bash, read_file, write_file, list_dir, search"},
		{"[tools]\nbash = false\nzz = true\naa = true", "[tools] aa: unknown tool"},
		{"[tools]\nbash = false\nsearch = true", ""},
		{"[tools]\n\"\" = false", `[tools] "": unknown tool`},
		{"", ""},
	} {
		c, err := Parse([]byte(tc.in))
		if err != nil {
			t.Fatalf("Parse(%q): %v (tool names are not Parse's to check)", tc.in, err)
		}
		err = c.CheckTools(known)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("CheckTools(%q) = %v, want nil", tc.in, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("CheckTools(%q) = %v, want it to mention %q", tc.in, err, tc.want)
		}
	}
	c, _ := Parse([]byte("[tools]\nfs__stat = false"))
	if err := c.CheckTools(append(known, "fs__stat")); err != nil {
		t.Errorf("a tool an upstream provider serves is refused: %v", err)
	}
}

func TestParseValues(t *testing.T) {
	c, err := Parse([]byte("transport = \"unix_socket\"\nport = 0\npolicy_stub_mode = true\n[tools]\nbash = false\nsearch = true\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Transport != TransportUnixSocket || c.Port != 0 || !c.PolicyStubMode {
		t.Errorf("values not applied: %+v", c)
	}
	if c.ToolEnabled("bash") || !c.ToolEnabled("search") || !c.ToolEnabled("read_file") {
		t.Errorf("tool switches wrong: %v", c.Tools)
	}
	if got := c.DisabledTools(); !reflect.DeepEqual(got, map[string]bool{"bash": true}) {
		t.Errorf("DisabledTools = %v", got)
	}
	if c.ToolTimeoutMS != 2000 || c.MaxReadBytes != 1<<20 {
		t.Errorf("defaults not kept for absent keys: %+v", c)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "none.toml")
	if c, err := Load(missing, false); err != nil || c.Transport != TransportStdio {
		t.Errorf("Load(missing, optional) = %v, %v; want defaults", c, err)
	}
	if _, err := Load(missing, true); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("Load(missing, required) = %v; want an error naming the file", err)
	}
	bad := filepath.Join(dir, "bad.toml")
	os.WriteFile(bad, []byte("nope = 1\n"), 0o600)
	if _, err := Load(bad, false); err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "nope") {
		t.Errorf("Load(bad) = %v; want an error naming the file and the key", err)
	}
}

func TestPathsFollowEnvironment(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "cfg"))
	t.Setenv("XDG_DATA_HOME", "relative/ignored")
	t.Setenv("XDG_RUNTIME_DIR", "")
	p, err := DefaultPaths()
	if err != nil {
		t.Fatal(err)
	}
	want := Paths{
		ConfigFile: filepath.Join(home, "cfg", "clawde", "mcp-server.toml"),
		DataDir:    filepath.Join(home, ".local", "share", "clawde"),
		DBFile:     filepath.Join(home, ".local", "share", "clawde", "clawd.db"),
		SecretFile: filepath.Join(home, ".local", "share", "clawde", "session.secret"),
		RuntimeDir: fallbackRuntimeDir(),
		Home:       home,

		RuntimeShared: true,
	}
	if p != want {
		t.Errorf("paths = %+v\nwant %+v", p, want)
	}
	if got := p.TokenPath("ws-1"); got != filepath.Join(home, ".claude", "hooks", ".clawde-token-ws-1") {
		t.Errorf("TokenPath = %s", got)
	}
	if got := p.SocketPath("ws-1"); got != filepath.Join(want.RuntimeDir, "clawd.ws-1.sock") {
		t.Errorf("SocketPath = %s", got)
	}
	if got := p.ExpandHome("~/x"); got != filepath.Join(home, "x") {
		t.Errorf("ExpandHome = %s", got)
	}
}

func TestWorkspaceID(t *testing.T) {
	tests := map[string]string{
		"/home/u/My Project": "my-project-",
		"/home/u/clawd":      "clawd-",
		"/":                  "root-",
		"/x/Ünïcode_dir":     "n-code-dir-",
	}
	for root, prefix := range tests {
		id := WorkspaceID(root)
		if !strings.HasPrefix(id, prefix) || len(id) != len(prefix)+8 {
			t.Errorf("WorkspaceID(%q) = %q, want %q + 8 hex", root, id, prefix)
		}
		for _, r := range id {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
				t.Errorf("WorkspaceID(%q) = %q has %q", root, id, r)
			}
		}
	}
	if WorkspaceID("/a/x") == WorkspaceID("/b/x") {
		t.Error("different roots with the same base name share an id")
	}
}

// Without XDG_RUNTIME_DIR the socket directory is per user, created 0700,
// and refused when it is not this user's own real directory.
func TestFallbackRuntimeDir(t *testing.T) {
	tmp, err := os.MkdirTemp("", "rt") // short: a long TMPDIR is replaced by /tmp
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	t.Setenv("TMPDIR", tmp)
	t.Setenv("XDG_RUNTIME_DIR", "")
	t.Setenv("HOME", tmp)
	p, err := DefaultPaths()
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(tmp, fmt.Sprintf("clawd-%d", os.Getuid()))
	if runtime.GOOS == "windows" {
		want = filepath.Join(tmp, "clawd")
	}
	if p.RuntimeDir != want || !p.RuntimeShared {
		t.Fatalf("RuntimeDir = %q (shared %v), want %q", p.RuntimeDir, p.RuntimeShared, want)
	}
	if err := p.CheckRuntimeDir(); err == nil {
		t.Error("CheckRuntimeDir accepted a missing directory")
	}
	if err := p.EnsureRuntimeDir(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(want); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("runtime dir: %v %v", fi.Mode(), err)
	}
	os.Chmod(want, 0o755)
	if err := p.CheckRuntimeDir(); err == nil || !strings.Contains(err.Error(), "chmod 700") {
		t.Errorf("a 0755 dir: %v", err)
	}
	// The chmod it suggests names the directory as one shell word: a
	// $TMPDIR with a blank would otherwise chmod its first half.
	spaced, err := os.MkdirTemp("", "r t")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(spaced) })
	sp := Paths{RuntimeDir: spaced, RuntimeShared: true}
	os.Chmod(spaced, 0o755)
	if err := sp.CheckRuntimeDir(); runtime.GOOS != "windows" && (err == nil || !strings.Contains(err.Error(), "chmod 700 '"+spaced+"'")) {
		t.Errorf("a 0755 dir with a blank in its path: %v", err)
	}
	if err := p.EnsureRuntimeDir(); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(want); fi.Mode().Perm() != 0o700 {
		t.Errorf("EnsureRuntimeDir left mode %v", fi.Mode().Perm())
	}
	// A symlink someone planted is refused by both.
	os.Remove(want)
	os.Symlink(t.TempDir(), want)
	if err := p.EnsureRuntimeDir(); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("symlink: %v", err)
	}
	os.Remove(want)
	// A directory of another user: only root can make one here.
	if os.Getuid() == 0 && runtime.GOOS != "windows" {
		os.Mkdir(want, 0o700)
		os.Chown(want, 12345, 12345)
		if err := p.EnsureRuntimeDir(); err == nil || !strings.Contains(err.Error(), "belongs to uid 12345") {
			t.Errorf("foreign dir: %v", err)
		}
	}
	// A TMPDIR as long as macOS's gives way to /tmp.
	if runtime.GOOS != "windows" {
		t.Setenv("TMPDIR", "/var/folders/zz/zyxvpxvq6csfxvn_n0000000000000/T/")
		if p, _ := DefaultPaths(); p.RuntimeDir != fmt.Sprintf("/tmp/clawd-%d", os.Getuid()) {
			t.Errorf("long TMPDIR: RuntimeDir = %s", p.RuntimeDir)
		}
		t.Setenv("TMPDIR", tmp)
	}
	// XDG_RUNTIME_DIR is the system's: used as is, nothing checked.
	t.Setenv("XDG_RUNTIME_DIR", tmp)
	if p, _ := DefaultPaths(); p.RuntimeDir != tmp || p.RuntimeShared || p.EnsureRuntimeDir() != nil {
		t.Errorf("with XDG_RUNTIME_DIR: %+v", p)
	}
}

// TestParseErrorKeysQuoted: a key that is not a bare key (empty, with a
// dot, a space or a control character) is quoted in the message, as it is
// written in TOML: `unknown key ` followed by nothing named no key, and
// "a.b" read as a table a's key b.
func TestParseErrorKeysQuoted(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`"" = true`, `unknown key "" (see`},
		{`"a.b" = 1`, `unknown key "a.b" (see`},
		{"\"x\\u001b[31m\" = 1", `unknown key "x\x1b[31m" (see`},
		{"[tools]\n\"a b\" = 1", `line 2, column 9: tools."a b": expected true or false`},
	} {
		_, err := Parse([]byte(tt.in))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) = %v, want it to mention %q", tt.in, err, tt.want)
		}
	}
}

// TestParseBOM: a file that starts with a UTF-8 byte order mark (Windows
// editors write one) is read as without it; go-toml alone refused it with
// "invalid character at start of key: U+00EF 'ï'".
func TestParseBOM(t *testing.T) {
	c, err := Parse([]byte("\xef\xbb\xbftransport = \"unix_socket\"\n"))
	if err != nil || c.Transport != TransportUnixSocket {
		t.Fatalf("Parse with a BOM = %+v, %v", c, err)
	}
	if _, err := Parse([]byte("\xef\xbb\xbf\xef\xbb\xbftransport = \"unix_socket\"\n")); err == nil {
		t.Error("a second BOM is not a BOM but a character, and no key starts with it")
	}
}

// TestLoadBadFileNamesTheFix: a config file that does not parse (truncated,
// a wrong type, an out-of-range value, an unknown key) is reported with
// where it is wrong and what to do about it, for every command that reads it.
func TestLoadBadFileNamesTheFix(t *testing.T) {
	dir := t.TempDir()
	for i, body := range []string{
		"transport = \"stdio\nport = ",
		"port = \"abc\"\n",
		"max_read_bytes = -5\n",
		"[tools]\nbash = \"yes\"\n",
		"nope = 1\n",
	} {
		file := filepath.Join(dir, fmt.Sprintf("bad%d.toml", i))
		if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Load(file, true)
		if err == nil || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), "clawd init --force --config "+file) {
			t.Errorf("%q: %v; want the file and the way to start over", body, err)
		}
	}
}

// TestRelativeHomeIsRefused: a HOME that is not an absolute path (env
// HOME=. in a script, a container's odd setting) would put clawd's data
// directory, database, secrets and credential files under the current
// directory, often the workspace a repository is checked out in. It is
// refused, as a relative XDG_* variable is ignored.
func TestRelativeHomeIsRefused(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("XDG_DATA_HOME", "")
	if runtime.GOOS == "windows" {
		t.Skip("HOME is not the home directory on Windows")
	}
	for _, h := range []string{"rel", ".", "./x", "~"} {
		t.Setenv("HOME", h)
		p, err := DefaultPaths()
		if err == nil || !strings.Contains(err.Error(), "HOME") {
			t.Errorf("HOME=%q: %+v, %v; want a refusal naming HOME", h, p, err)
		}
	}
}

// TestRelativeStatePathsAreRefused: socket_path and token_path are read
// from the directory clawd happens to run in when relative: a client
// starts `clawd serve` in the project, so token_path = "clawd-token" put
// the workspace token in the repository, where a commit picks it up. They
// must be absolute or start with ~/.
func TestRelativeStatePathsAreRefused(t *testing.T) {
	for _, key := range []string{"socket_path", "token_path"} {
		for _, v := range []string{"tok", "./x/tok", "~other/tok", "../tok"} {
			_, err := Parse([]byte(key + " = " + strconv.Quote(v) + "\n"))
			if err == nil || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "absolute") {
				t.Errorf("%s = %q: %v; want a refusal naming the key", key, v, err)
			}
		}
		// A directory is no place for a token file or a socket: binding
		// or writing there could only fail later, naming no key.
		for _, v := range []string{"~", "~/", "/", "~/.claude/", "/tmp/x/.", "/tmp/x/.."} {
			_, err := Parse([]byte(key + " = " + strconv.Quote(v) + "\n"))
			if err == nil || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "a file") {
				t.Errorf("%s = %q: %v; want a refusal saying it must name a file", key, v, err)
			}
		}
		abs := filepath.Join(t.TempDir(), "x")
		for _, v := range []string{"~/x", abs, ""} {
			if _, err := Parse([]byte(key + " = " + strconv.Quote(v) + "\n")); err != nil {
				t.Errorf("%s = %q refused: %v", key, v, err)
			}
		}
	}
}
