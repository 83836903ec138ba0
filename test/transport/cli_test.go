//go:build linux || darwin

package transport_e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// The CLI client (clawd tools, call, health) against both transports.
func TestCLIClient(t *testing.T) {
	for _, tr := range []string{"unix_socket", "tcp_loopback"} {
		t.Run(tr, func(t *testing.T) {
			e := newEnv(t)
			args := []string{"--transport", tr}
			if tr == "tcp_loopback" {
				args = append(args, "--port", "0")
			}
			d := e.serve(args...)
			via := "unix socket"
			if tr == "tcp_loopback" {
				via = "http://127.0.0.1:"
			}
			os.WriteFile(filepath.Join(e.WS, "args.json"), []byte(`{"path":"a.txt"}`), 0o600)

			tests := []struct {
				name     string
				stdin    string
				args     []string
				code     int
				stdout   string // substring
				stderr   string // substring
				jsonOut  bool   // stdout must be valid JSON
				noStdout bool
			}{
				{name: "tools", args: []string{"tools"}, stdout: "read_file"},
				{name: "tools json", args: []string{"tools", "--json"}, stdout: `"inputSchema"`, jsonOut: true},
				{name: "call", args: []string{"call", "read_file", "--params", `{"path":"a.txt"}`}, stdout: `"content": "hello\n"`, jsonOut: true},
				{name: "call json", args: []string{"call", "read_file", "--params", `{"path":"a.txt"}`, "--json"}, stdout: `"structuredContent"`, jsonOut: true},
				{name: "params from a file", args: []string{"call", "read_file", "--params", "@args.json"}, stdout: `"size_bytes": 6`},
				{name: "params from stdin", stdin: `{"path":"a.txt"}`, args: []string{"call", "read_file", "--params", "@-"}, stdout: `"size_bytes": 6`},
				{name: "tool error", args: []string{"call", "read_file", "--params", `{"path":"missing.txt"}`}, code: 1, stderr: "missing.txt", noStdout: true},
				{name: "tool error json", args: []string{"call", "read_file", "--params", `{"path":"missing.txt"}`, "--json"}, code: 1, stdout: `"isError": true`},
				{name: "sandbox refusal", args: []string{"call", "read_file", "--params", `{"path":"../../etc/passwd"}`}, code: 1, stderr: "-32005 sandbox_violation", noStdout: true},
				{name: "refusal json", args: []string{"call", "read_file", "--params", `{"path":"/etc/passwd"}`, "--json"}, code: 1, stderr: `"code":-32005`, noStdout: true},
				{name: "unknown tool", args: []string{"call", "nope"}, code: 1, stderr: "-32602"},
				{name: "params not JSON", args: []string{"call", "read_file", "--params", "{path"}, code: 2, stderr: "not valid JSON"},
				{name: "params not an object", args: []string{"call", "read_file", "--params", `["a.txt"]`}, code: 2, stderr: "must be a JSON object"},
				{name: "params file missing", args: []string{"call", "read_file", "--params", "@nofile.json"}, code: 2, stderr: "nofile.json"},
				{name: "no tool name", args: []string{"call"}, code: 2},
				{name: "bad timeout", args: []string{"call", "read_file", "--timeout", "-5"}, code: 2, stderr: "--timeout"},
				{name: "timeout that overflows", args: []string{"call", "read_file", "--params", `{"path":"a.txt"}`, "--timeout", "18446744073710"}, code: 2, stderr: "--timeout", noStdout: true},
				{name: "empty tool name", args: []string{"call", ""}, code: 2, stderr: "tool name", noStdout: true},
				{name: "tool name with a newline", args: []string{"call", "read_file\nbash"}, code: 2, stderr: "tool name", noStdout: true},
				{name: "unknown flag", args: []string{"tools", "--bogus"}, code: 2},
				{name: "health", args: []string{"health"}, stdout: "status:        ok"},
				{name: "health names the transport", args: []string{"health"}, stdout: via},
				{name: "health json", args: []string{"health", "--json"}, stdout: `"mcp_version"`, jsonOut: true},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					out, errOut, code := e.RunStdin(tt.stdin, tt.args...)
					if code != tt.code {
						t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, out, errOut)
					}
					if !strings.Contains(out, tt.stdout) {
						t.Errorf("stdout %q lacks %q", out, tt.stdout)
					}
					if !strings.Contains(errOut, tt.stderr) {
						t.Errorf("stderr %q lacks %q", errOut, tt.stderr)
					}
					if tt.jsonOut && !jsontext.Value(out).IsValid() {
						t.Errorf("stdout is not JSON: %s", out)
					}
					if tt.noStdout && out != "" {
						t.Errorf("stdout should be empty on failure: %s", out)
					}
				})
			}
			// The health pid is the daemon's.
			out, _, _ := e.Run("health", "--json")
			var h struct {
				PID int `json:"pid"`
			}
			json.Unmarshal([]byte(out), &h, json.RejectUnknownMembers(false))
			if h.PID != d.Cmd.Process.Pid {
				t.Errorf("health pid %d, want %d", h.PID, d.Cmd.Process.Pid)
			}
		})
	}
}

func TestCLIWithoutDaemon(t *testing.T) {
	e := newEnv(t)
	for _, args := range [][]string{{"tools"}, {"health"}, {"call", "read_file", "--params", `{"path":"a.txt"}`}} {
		_, errOut, code := e.Run(args...)
		if code != 1 || !strings.Contains(errOut, "no running clawd daemon for workspace") || !strings.Contains(errOut, "clawd serve") {
			t.Errorf("%v: exit %d %q, want 1 with how to start one", args, code, errOut)
		}
	}
}

func TestCLIPrefersSocketOverHTTP(t *testing.T) {
	e := newEnv(t)
	e.serve("--transport", "tcp_loopback", "--port", "0")
	e.serve("--transport", "unix_socket")
	out, _, code := e.Run("health")
	if code != 0 || !strings.Contains(out, "unix socket") {
		t.Errorf("with both daemons running, health went %q; want the socket first", out)
	}
}

// TestCLINeverSendsTokenElsewhere tampers with the state file so that it
// names a non-loopback address: the client must refuse to use it.
func TestCLINeverSendsTokenElsewhere(t *testing.T) {
	e := newEnv(t)
	e.serve("--transport", "tcp_loopback", "--port", "0")
	p := filepath.Join(e.Home, ".local", "share", "clawde", "run", e.WorkspaceID()+".tcp.json")
	b, _ := os.ReadFile(p)
	st := e.State("tcp")
	os.WriteFile(p, []byte(strings.Replace(string(b), st.Addr, "192.0.2.1:7430", 1)), 0o600)
	_, errOut, code := e.Run("tools")
	if code != 1 || !strings.Contains(errOut, "not a loopback address") {
		t.Errorf("exit %d %q, want a refusal naming the non-loopback address", code, errOut)
	}
	// A loopback port that answers as another pid does not get the token either.
	os.WriteFile(p, []byte(strings.Replace(string(b), fmt.Sprintf(`"pid":%d`, st.PID), `"pid":1`, 1)), 0o600)
	_, errOut, code = e.Run("tools")
	if code != 1 || !strings.Contains(errOut, "not the daemon's pid 1; not sending the token there") {
		t.Errorf("state file naming another live pid: exit %d %q", code, errOut)
	}
}

func TestCallTimeoutCancels(t *testing.T) {
	e := newEnv(t)
	e.serve("--transport", "unix_socket")
	start := time.Now()
	_, errOut, code := e.Run("call", "bash", "--params", `{"command":"sleep 30","timeout_ms":60000}`, "--timeout", "300")
	if code != 1 || !strings.Contains(errOut, "no answer within 300 ms") {
		t.Errorf("exit %d %q", code, errOut)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("--timeout 300 took %v", el)
	}
}
