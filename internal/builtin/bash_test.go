//go:build unix

package builtin

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json"

	"github.com/clawde/clawd/internal/tools"
	"github.com/clawde/clawd/test/clawdtest"
)

func newBashWS(t *testing.T, lim *Limits) (string, tools.Tool) {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not installed")
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeFileT(t, filepath.Join(dir, "sub", "f.txt"), "in sub\n", 0o644)
	writeFileT(t, filepath.Join(dir, "file"), "x", 0o644)
	symlinkT(t, "sub", filepath.Join(dir, "sublink"))
	return dir, NewBash(testEnv(t, dir, lim))
}

func runBash(t *testing.T, tool tools.Tool, args map[string]any) *BashResult {
	t.Helper()
	res, err := callTool(t, tool, args)
	if err != nil {
		t.Fatalf("bash %v: %v", args, err)
	}
	return res.(*BashResult)
}

func TestBash(t *testing.T) {
	dir, tool := newBashWS(t, nil)
	tests := []struct {
		name string
		args map[string]any
		want BashResult
	}{
		{name: "stdout and stderr apart", args: map[string]any{"command": "echo out; echo err >&2"},
			want: BashResult{ExitCode: 0, Stdout: "out\n", Stderr: "err\n"}},
		{name: "non-zero exit is a result", args: map[string]any{"command": "echo partial; exit 3"},
			want: BashResult{ExitCode: 3, Stdout: "partial\n"}},
		{name: "killed by SIGTERM", args: map[string]any{"command": "kill -TERM $$"},
			want: BashResult{ExitCode: 128 + 15}},
		{name: "killed by SIGKILL", args: map[string]any{"command": "kill -KILL $$"},
			want: BashResult{ExitCode: 128 + 9}},
		{name: "runs in the root by default", args: map[string]any{"command": "pwd; pwd -P; cat sub/f.txt"},
			want: BashResult{Stdout: dir + "\n" + dir + "\n" + "in sub\n"}},
		{name: "working_dir", args: map[string]any{"command": "pwd -P; echo $PWD; cat f.txt", "working_dir": "sub"},
			want: BashResult{Stdout: dir + "/sub\n" + dir + "/sub\nin sub\n"}},
		{name: "working_dir through an in-root link: canonical", args: map[string]any{"command": "pwd -P; echo $PWD", "working_dir": "sublink"},
			want: BashResult{Stdout: dir + "/sub\n" + dir + "/sub\n"}},
		{name: "working_dir absolute inside", args: map[string]any{"command": "pwd -P", "working_dir": dir + "/sub"},
			want: BashResult{Stdout: dir + "/sub\n"}},
		{name: "stdin is /dev/null", args: map[string]any{"command": "cat; readlink /proc/self/fd/0"},
			want: BashResult{Stdout: "/dev/null\n"}},
		{name: "invalid UTF-8 is replaced", args: map[string]any{"command": `printf 'a\xffb\xc3'; printf '\xfe' >&2`},
			want: BashResult{Stdout: "a\uFFFDb\uFFFD", Stderr: "\uFFFD"}},
		{name: "explicit timeout, fast command", args: map[string]any{"command": "echo ok", "timeout_ms": 5000},
			want: BashResult{Stdout: "ok\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := runBash(t, tool, tt.args)
			if *got != tt.want {
				t.Errorf("got  %+v\nwant %+v", *got, tt.want)
			}
		})
	}
}

// The child gets stdin, stdout, stderr and nothing of clawd's: not the
// working directory handle, not the pipes of other calls. (Descriptors that
// clawd itself inherited without close-on-exec pass through, as with any
// exec; the expected set includes those of the test process.)
func TestBashNoDescriptorLeak(t *testing.T) {
	_, tool := newBashWS(t, nil)
	want := clawdtest.ExpectedChildFDs(t)
	// Look at a plain child of bash (no pipeline: bash's own transient
	// pipe descriptors would show up otherwise), once it has exec'd sleep:
	// until then it is a fork of bash, whose descriptors are bash's.
	script := `sleep 5 & p=$!
for i in $(seq 200); do [ "$(readlink /proc/$p/exe)" != "$(readlink /proc/$$/exe)" ] && break; sleep 0.01; done
ls /proc/$p/fd; kill $p`
	r := runBash(t, tool, map[string]any{"command": script, "working_dir": "sub"})
	got := strings.Fields(r.Stdout)
	clawdtest.SortFDs(got)
	if !slices.Equal(got, want) {
		t.Errorf("bash has descriptors %v, want %v", got, want)
	}
}

func TestBashOutputCap(t *testing.T) {
	_, tool := newBashWS(t, &Limits{MaxOutputBytes: 8 << 10, DefaultTimeout: 10 * time.Second})
	tests := []struct {
		name                  string
		cmd                   string
		stdoutLen, stderrLen  int
		truncated             bool
		stdoutPrefix, wantErr string
	}{
		{name: "exactly the cap", cmd: "head -c 8192 /dev/zero | tr '\\0' a", stdoutLen: 8192},
		{name: "one over", cmd: "head -c 8193 /dev/zero | tr '\\0' a", stdoutLen: 8192, truncated: true},
		{name: "stderr capped on its own", cmd: "echo hi; head -c 20000 /dev/zero | tr '\\0' e >&2", stdoutLen: 3, stderrLen: 8192, truncated: true},
		// 10 MB: the child must never block on a full pipe after the cap.
		{name: "large output keeps draining", cmd: "head -c 10000000 /dev/zero | tr '\\0' z; echo done >&2", stdoutLen: 8192, stderrLen: 5, truncated: true},
		// A 2-byte rune straddling the cap is dropped, not cut in half.
		{name: "rune at the cap", cmd: "head -c 8191 /dev/zero | tr '\\0' a; printf 'é and more'", stdoutLen: 8191, truncated: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runBash(t, tool, map[string]any{"command": tt.cmd})
			if len(r.Stdout) != tt.stdoutLen || len(r.Stderr) != tt.stderrLen || r.Truncated != tt.truncated || r.ExitCode != 0 {
				t.Errorf("stdout %d stderr %d truncated %v exit %d; want %d %d %v 0",
					len(r.Stdout), len(r.Stderr), r.Truncated, r.ExitCode, tt.stdoutLen, tt.stderrLen, tt.truncated)
			}
			if !utf8.ValidString(r.Stdout) || !utf8.ValidString(r.Stderr) {
				t.Error("output is not valid UTF-8")
			}
		})
	}
}

// Replacing invalid bytes never lets the text grow past the cap.
func TestCaptureTextStaysUnderCap(t *testing.T) {
	c := &capture{max: 10}
	c.Write([]byte("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"))
	s, trunc := c.text()
	if len(s) > 10 || !trunc || !utf8.ValidString(s) || s != strings.Repeat("\uFFFD", 3) {
		t.Errorf("text = %q (%d bytes), truncated %v", s, len(s), trunc)
	}
}

// processGone reports whether pid no longer runs: no such process, or a
// zombie waiting for a reaper (PID 1 in a container may not reap).
func processGone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) == syscall.ESRCH
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && (s[i+2] == 'Z' || s[i+2] == 'X')
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	var b []byte
	// The pid file is written by the command; give it a moment, a long
	// one on a loaded machine.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var err error
		if b, err = os.ReadFile(path); err == nil && len(b) > 0 && b[len(b)-1] == '\n' {
			break
		}
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("pid file %s: %q", path, b)
	}
	return pid
}

func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !processGone(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("%s (pid %d) survived the call", what, pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// slowCall bounds the bash calls below that must end early: each takes
// well under a second, and the bound is far above that for a loaded
// machine, yet far below the 20 s or more the call would take if it
// waited for the commands' sleeps (the timeout or cancel ignored, the
// background or escaped child waited for).
const slowCall = 10 * time.Second

func TestBashTimeoutKillsGroup(t *testing.T) {
	dir, tool := newBashWS(t, nil)
	start := time.Now()
	r := runBash(t, tool, map[string]any{
		"command":    "sleep 100 & echo $! > bg.pid; echo started; sleep 100",
		"timeout_ms": 300,
	})
	if el := time.Since(start); el > slowCall {
		t.Errorf("took %v for a 300 ms timeout", el)
	}
	if r.ExitCode != 124 || !r.TimedOut || r.Stdout != "started\n" {
		t.Errorf("got %+v, want exit 124, timed_out, the output so far", *r)
	}
	waitGone(t, readPid(t, filepath.Join(dir, "bg.pid")), "backgrounded child")
}

func TestBashDefaultTimeoutFromLimits(t *testing.T) {
	_, tool := newBashWS(t, &Limits{DefaultTimeout: 200 * time.Millisecond})
	start := time.Now()
	r := runBash(t, tool, map[string]any{"command": "sleep 30"})
	if !r.TimedOut || r.ExitCode != 124 || time.Since(start) > slowCall {
		t.Errorf("got %+v after %v; want a timeout at ~200ms", *r, time.Since(start))
	}
}

// A child that moved to a process group of its own (job control: `set -m`,
// setpgid) but stayed in the call's session dies at the timeout and on
// cancel with the rest: the shell leads a session of its own, and the
// kill reaches every member of it.
func TestBashTimeoutAndCancelKillSession(t *testing.T) {
	dir, tool := newBashWS(t, nil)
	cmd := "set -m; sleep 100 & echo $! > job.pid; set +m; sleep 100"
	start := time.Now()
	r := runBash(t, tool, map[string]any{"command": cmd, "timeout_ms": 300})
	if el := time.Since(start); el > slowCall || !r.TimedOut || r.ExitCode != 124 {
		t.Errorf("got %+v after %v, want a timeout", *r, el)
	}
	waitGone(t, readPid(t, filepath.Join(dir, "job.pid")), "job-control child at the timeout")

	os.Remove(filepath.Join(dir, "job.pid"))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		readPid(t, filepath.Join(dir, "job.pid"))
		cancel()
	}()
	if _, err := callToolCtx(ctx, t, tool, map[string]any{"command": cmd, "timeout_ms": 60000}); err != context.Canceled {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	waitGone(t, readPid(t, filepath.Join(dir, "job.pid")), "job-control child on cancel")
}

// The shell leads its session (and its group): no controlling terminal,
// and the session the timeout's kill reaches is the call's alone.
func TestBashLeadsItsSession(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	_, tool := newBashWS(t, nil)
	r := runBash(t, tool, map[string]any{"command": `read -r _ _ pgid sid tty _ < <(sed 's/.*) //' /proc/$$/stat); echo "$$ $pgid $sid $tty"`})
	f := strings.Fields(r.Stdout)
	if len(f) != 4 || f[0] != f[1] || f[0] != f[2] || f[3] != "0" {
		t.Errorf("pid, group, session, tty = %q; want the shell's pid three times and no terminal (0)", r.Stdout)
	}
}

// A background child still running when bash exits is killed, and the call
// neither waits for it nor hangs on the output pipe it inherited.
func TestBashBackgroundChildDoesNotOutliveCall(t *testing.T) {
	dir, tool := newBashWS(t, nil)
	start := time.Now()
	r := runBash(t, tool, map[string]any{"command": "sleep 30 & echo $! > bg.pid; echo done", "timeout_ms": 20000})
	if el := time.Since(start); el > slowCall {
		t.Errorf("call took %v; it waited for the background child", el)
	}
	if r.ExitCode != 0 || r.TimedOut || r.Stdout != "done\n" {
		t.Errorf("got %+v", *r)
	}
	waitGone(t, readPid(t, filepath.Join(dir, "bg.pid")), "background child")
}

// A process that leaves the group (setsid) cannot be killed with it; if it
// holds the output pipe the call still returns after the grace period.
func TestBashEscapedChildHoldingPipe(t *testing.T) {
	dir, tool := newBashWS(t, nil)
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid not installed")
	}
	start := time.Now()
	r := runBash(t, tool, map[string]any{"command": "setsid sh -c 'echo $$ > esc.pid; exec sleep 30' & sleep 0.2; echo done", "timeout_ms": 20000})
	pid := readPid(t, filepath.Join(dir, "esc.pid"))
	defer syscall.Kill(pid, syscall.SIGKILL)
	if el := time.Since(start); el > slowCall {
		t.Errorf("call took %v with an escaped child holding stdout", el)
	}
	if r.Stdout != "done\n" || r.ExitCode != 0 {
		t.Errorf("got %+v", *r)
	}
	// It outlives the call, as the tool's description and the server's
	// instructions say.
	if err := syscall.Kill(pid, 0); err != nil {
		t.Errorf("the setsid child is gone after the call (%v); the description says it can outlive it", err)
	}
}

// bash is not confined to the workspace: a command reads and writes next to
// it. The tool's description and the server's instructions say so; if this
// test ever fails because a confinement landed, update them.
func TestBashIsNotConfined(t *testing.T) {
	dir, tool := newBashWS(t, nil)
	outside := filepath.Join(filepath.Dir(dir), filepath.Base(dir)+"-outside")
	writeFileT(t, filepath.Join(outside, "secret"), "outside\n", 0o644)
	t.Cleanup(func() { os.RemoveAll(outside) })
	r := runBash(t, tool, map[string]any{"command": "cat " + outside + "/secret; echo made > " + outside + "/made; cd / && pwd"})
	if r.ExitCode != 0 || r.Stdout != "outside\n/\n" {
		t.Errorf("got %+v", *r)
	}
	if b, err := os.ReadFile(filepath.Join(outside, "made")); err != nil || string(b) != "made\n" {
		t.Errorf("bash could not write outside the workspace: %q %v", b, err)
	}
	d := tool.Spec().Description
	for _, w := range []string{"not confined to the workspace", "setsid", "can outlive the call"} {
		if !strings.Contains(d, w) {
			t.Errorf("bash's description does not say %q: %s", w, d)
		}
	}
	if strings.Contains(d, "nothing outlives") {
		t.Errorf("bash's description claims nothing outlives the call: %s", d)
	}
}

func TestBashCancelKillsGroup(t *testing.T) {
	dir, tool := newBashWS(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		readPid(t, filepath.Join(dir, "bg.pid")) // started
		cancel()
	}()
	start := time.Now()
	res, err := callToolCtx(ctx, t, tool, map[string]any{"command": "sleep 100 & echo $! > bg.pid; sleep 100", "timeout_ms": 60000})
	if err != context.Canceled || res != nil {
		t.Fatalf("got %+v, %v; want context.Canceled", res, err)
	}
	if el := time.Since(start); el > slowCall {
		t.Errorf("cancel took %v", el)
	}
	waitGone(t, readPid(t, filepath.Join(dir, "bg.pid")), "backgrounded child after cancel")
}

func TestBashEnvScrubbed(t *testing.T) {
	_, tool := newBashWS(t, nil)
	t.Setenv("CLAWDE_SESSION_SECRET", "s3cret-session")
	t.Setenv("CLAWDE_MCP_SOCKET_PATH", "/tmp/clawd.sock")
	t.Setenv("CLAWD_TOKEN", "tok-123")
	t.Setenv("clawde_lower", "lower-secret")
	t.Setenv("CLAWDEX_KEEP", "kept-1") // not a clawd prefix
	t.Setenv("MY_CLAWD_NOTE", "kept-2")
	r := runBash(t, tool, map[string]any{"command": "env"})
	for _, s := range []string{"s3cret-session", "CLAWDE_", "CLAWD_TOKEN", "tok-123", "lower-secret", "clawde_lower"} {
		if strings.Contains(r.Stdout, s) {
			t.Errorf("child environment contains %q", s)
		}
	}
	for _, s := range []string{"CLAWDEX_KEEP=kept-1", "MY_CLAWD_NOTE=kept-2", "PATH="} {
		if !strings.Contains(r.Stdout, s) {
			t.Errorf("child environment lost %q", s)
		}
	}
}

func TestBashErrors(t *testing.T) {
	_, tool := newBashWS(t, nil)
	tests := []struct {
		name    string
		args    any
		argErr  bool
		msgPart string
	}{
		{name: "missing command", args: `{}`, argErr: true, msgPart: `"command" is required`},
		{name: "empty command", args: `{"command":"  "}`, argErr: true, msgPart: `"command" is empty`},
		{name: "NUL in command", args: map[string]any{"command": "echo a\x00b"}, argErr: true, msgPart: "NUL"},
		{name: "timeout zero", args: `{"command":"true","timeout_ms":0}`, argErr: true, msgPart: `"timeout_ms" must be between 1 and 600000`},
		{name: "timeout negative", args: `{"command":"true","timeout_ms":-5}`, argErr: true, msgPart: `"timeout_ms"`},
		{name: "timeout too large", args: `{"command":"true","timeout_ms":600001}`, argErr: true, msgPart: `"timeout_ms"`},
		{name: "timeout string", args: `{"command":"true","timeout_ms":"100"}`, argErr: true, msgPart: `"timeout_ms"`},
		{name: "timeout fraction", args: `{"command":"true","timeout_ms":1.5}`, argErr: true, msgPart: `"timeout_ms"`},
		{name: "unknown argument", args: `{"command":"true","env":{}}`, argErr: true, msgPart: `unknown argument "env"`},
		{name: "working_dir missing", args: `{"command":"true","working_dir":"nope"}`, msgPart: `working_dir "nope" does not exist`},
		{name: "working_dir is a file", args: `{"command":"true","working_dir":"file"}`, msgPart: `working_dir "file" is not a directory (it is a regular file)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := callTool(t, tool, tt.args)
			if tt.argErr && !isArgError(err) || !tt.argErr && !isToolError(err) {
				t.Fatalf("got %+v, %T %v; want argErr=%v", res, err, err, tt.argErr)
			}
			if !strings.Contains(err.Error(), tt.msgPart) {
				t.Errorf("error %q does not mention %q", err, tt.msgPart)
			}
		})
	}
}

func TestBashMissingShell(t *testing.T) {
	dir, _ := newBashWS(t, nil)
	tool := &bashTool{env: testEnv(t, dir, nil), shell: "clawd-no-such-shell"}
	_, err := callTool(t, tool, map[string]any{"command": "true"})
	if !isToolError(err) || !strings.Contains(err.Error(), "not installed or not in clawd's PATH") {
		t.Errorf("got %v; want a tool error naming the missing shell", err)
	}
}

// The bash schema states the configured default timeout, and follows a
// change of it (a config reload).
func TestBashSchemaStatesConfiguredTimeout(t *testing.T) {
	timeout := 7 * time.Second
	tool := NewBash(&Env{Limits: func() Limits {
		l := DefaultLimits()
		l.DefaultTimeout = timeout
		return l
	}})
	for _, want := range []string{"7000", "45000"} {
		schema := string(tool.Spec().InputSchema)
		if !strings.Contains(schema, `"default":`+want+`,`) || !strings.Contains(schema, "default "+want+" (the server's tool_timeout_ms)") ||
			strings.Contains(schema, "2000") {
			t.Errorf("timeout %v: schema %s", timeout, schema)
		}
		timeout = 45 * time.Second
	}
}

// progressLog is a tools.Reporter that keeps the progress reports.
type progressLog struct {
	mu    sync.Mutex
	steps []float64
	msgs  []string
}

func (p *progressLog) Progress(progress, total float64, message string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.steps = append(p.steps, progress)
	p.msgs = append(p.msgs, message)
}
func (p *progressLog) Log(string, string, any) {}

// A client that asked for progress hears every second how long bash has
// run; the reports increase.
func TestBashReportsProgress(t *testing.T) {
	_, tool := newBashWS(t, nil)
	defer func(d time.Duration) { progressEvery = d }(progressEvery)
	progressEvery = 100 * time.Millisecond
	rep := &progressLog{}
	ctx := tools.WithReporter(context.Background(), rep)
	args, _ := json.Marshal(map[string]any{"command": "sleep 0.55"})
	if _, err := tool.Call(ctx, args); err != nil {
		t.Fatal(err)
	}
	rep.mu.Lock()
	defer rep.mu.Unlock()
	if len(rep.steps) < 2 || rep.steps[0] <= 0 || rep.steps[1] <= rep.steps[0] || !strings.HasPrefix(rep.msgs[0], "running for ") {
		t.Errorf("progress reports %v %q, want increasing elapsed seconds", rep.steps, rep.msgs)
	}
}

// groupLog is an Env.Groups that remembers what it was told.
type groupLog struct {
	mu      sync.Mutex
	started []int
	forgot  []int
}

func (g *groupLog) Started(pgid int) func() {
	g.mu.Lock()
	g.started = append(g.started, pgid)
	g.mu.Unlock()
	return func() {
		g.mu.Lock()
		g.forgot = append(g.forgot, pgid)
		g.mu.Unlock()
	}
}

// Each call's group (the shell's pid) is recorded while the call runs and
// dropped, once, before the call returns: what the daemon sweeps after a
// kill -9 is only the groups of calls that were running.
func TestBashRecordsItsGroup(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not installed")
	}
	env := testEnv(t, dir, nil)
	g := &groupLog{}
	env.Groups = g
	r := runBash(t, NewBash(env), map[string]any{"command": "sleep 30 & echo $$"})
	sh, err := strconv.Atoi(strings.TrimSpace(r.Stdout))
	if err != nil {
		t.Fatalf("stdout %q", r.Stdout)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if !slices.Equal(g.started, []int{sh}) || !slices.Equal(g.forgot, []int{sh}) {
		t.Errorf("recorded %v, dropped %v; want the shell's group %d once each", g.started, g.forgot, sh)
	}
}
