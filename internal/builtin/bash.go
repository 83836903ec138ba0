package builtin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/sandbox"
	"github.com/clawde/clawd/internal/support/fileutil"
	"github.com/clawde/clawd/internal/support/proc"
	"github.com/clawde/clawd/internal/tools"
)

// MaxBashTimeout is the largest timeout_ms a call may ask for. The default is
// the config's tool_timeout_ms (2 s); builds and test suites need more, but a
// call that may hold a concurrency slot for hours is a mistake, not a plan.
const MaxBashTimeout = 10 * time.Minute

// pipeGrace is how long the tool waits for EOF on stdout/stderr after the
// process group is gone. Only a process that left the group (setsid, job
// control) can still hold the pipes then; the call returns anyway.
const pipeGrace = 250 * time.Millisecond

type bashTool struct {
	env  *Env
	spec tools.Spec
	// withTimeout is spec with the timeout_ms default of the config in
	// force, rebuilt when tool_timeout_ms changes (a reload).
	withTimeout atomic.Pointer[timedSpec]
	// shell is the program looked up in PATH ("bash"); tests point it at a
	// missing name to check the error.
	shell string
}

// NewBash returns the bash tool.
func NewBash(env *Env) tools.Tool {
	return &bashTool{env: env, shell: "bash", spec: tools.Spec{
		Name:  "bash",
		Title: "Run a shell command",
		Description: "Run a command with `bash -c` in the workspace root or working_dir (a directory inside the " +
			"workspace). stdin is empty. stdout and stderr are returned separately, each capped (truncated=true " +
			"when cut); invalid UTF-8 is replaced by U+FFFD. A non-zero exit is a normal result. At timeout_ms " +
			"(default from the server config) the whole process group is killed, and on Linux the rest of the command's " +
			"session too (jobs moved to another group by set -m): exit_code 124, timed_out true. " +
			"A command killed by a signal reports 128+signal. When the command exits its process group is killed, " +
			"so background jobs (cmd &) end with it, but a process that leaves the group (setsid, set -m) is not " +
			"killed and can outlive the call. The command is not confined to the workspace: it runs with the " +
			"rights of clawd's user and can read and write anything that user can.",
		Permission:   tools.PermExecute,
		InputSchema:  compact(bashInputSchema),
		OutputSchema: compact(bashOutputSchema),
		PathArgs:     []string{"working_dir"},
	}}
}

type timedSpec struct {
	ms   int64
	spec tools.Spec
}

// Spec states the configured default timeout in the input schema, so a
// client (and its model) sees the timeout this server applies, not a fixed
// 2000.
func (t *bashTool) Spec() *tools.Spec {
	ms := t.env.limits().DefaultTimeout.Milliseconds()
	if ms <= 0 {
		ms = DefaultLimits().DefaultTimeout.Milliseconds()
	}
	if c := t.withTimeout.Load(); c != nil && c.ms == ms {
		return &c.spec
	}
	c := &timedSpec{ms: ms, spec: t.spec}
	n := strconv.FormatInt(ms, 10)
	schema := strings.Replace(string(t.spec.InputSchema), `"default":2000,`, `"default":`+n+`,`, 1)
	schema = strings.Replace(schema, "default 2000 (the server's", "default "+n+" (the server's", 1)
	c.spec.InputSchema = jsontext.Value(schema)
	t.withTimeout.Store(c)
	return &c.spec
}

type bashArgs struct {
	Command    *string `json:"command"`
	WorkingDir *string `json:"working_dir"`
	TimeoutMS  *int64  `json:"timeout_ms"`
}

// BashResult is bash's output object (docs/tools.md): exit code, stdout,
// stderr, whether either was truncated, and whether the call timed out.
type BashResult struct {
	ExitCode  int    `json:"exit_code"`
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`
	Truncated bool   `json:"truncated"`
	TimedOut  bool   `json:"timed_out"`
}

// AuditOutcome makes a timed-out call's audit row say "timeout" instead of
// "ok": the result is a normal one for the client, but the command did not
// finish.
func (r *BashResult) AuditOutcome() string {
	if r.TimedOut {
		return "timeout"
	}
	return ""
}

// exitTimedOut is the exit code of a command killed at its timeout, as
// coreutils timeout(1) reports it.
const exitTimedOut = 124

func (t *bashTool) Call(ctx context.Context, raw jsontext.Value) (any, error) {
	var a bashArgs
	if err := tools.DecodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if a.Command == nil {
		return nil, &tools.ArgError{Msg: `"command" is required`}
	}
	if strings.TrimSpace(*a.Command) == "" {
		return nil, &tools.ArgError{Msg: `"command" is empty; give the shell command to run`}
	}
	if strings.IndexByte(*a.Command, 0) >= 0 {
		return nil, &tools.ArgError{Msg: `"command" contains a NUL byte, which no shell command can carry`}
	}
	lim := t.env.limits()
	timeout := lim.DefaultTimeout
	if timeout <= 0 {
		timeout = DefaultLimits().DefaultTimeout
	}
	if a.TimeoutMS != nil {
		ms := *a.TimeoutMS
		if ms <= 0 || ms > MaxBashTimeout.Milliseconds() {
			return nil, &tools.ArgError{Msg: fmt.Sprintf(`"timeout_ms" must be between 1 and %d (10 minutes), got %d`, MaxBashTimeout.Milliseconds(), ms)}
		}
		timeout = time.Duration(ms) * time.Millisecond
	}
	outCap := lim.MaxOutputBytes
	if outCap <= 0 {
		outCap = DefaultLimits().MaxOutputBytes
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	shell, err := findShell(t.shell)
	if err != nil {
		return nil, err
	}
	wd := ""
	if a.WorkingDir != nil {
		wd = *a.WorkingDir
	}
	dir, err := openWorkDir(ctx, t.env.WS, wd)
	if err != nil {
		return nil, err
	}
	defer dir.f.Close() // only after the child has started: its chdir uses it
	res, err := runIn(ctx, shell, *a.Command, dir, timeout, outCap, t.env.Groups)
	if err != nil {
		return nil, err // not a typed nil inside the interface
	}
	return res, nil
}

// runIn runs command with bash in dir and builds the result. proc gives
// the shell its own process group (a job object on Windows), clawd's
// environment without clawd's own variables and with PWD set, stdin from
// the null device, and (Linux) death with clawd. groups, if not nil, records
// the shell's group while the call runs (Env.Groups).
func runIn(ctx context.Context, shell, command string, dir *workDir, timeout time.Duration, outCap int, groups GroupRecorder) (*BashResult, error) {
	stdout, stderr := &capture{max: outCap}, &capture{max: outCap}
	c := &proc.Cmd{
		Path: shell, Args: []string{"-c", command},
		Dir: dir.cwd, Env: []string{"PWD=" + dir.pwd},
		Stdout: stdout, Stderr: stderr, PipeGrace: pipeGrace,
		// A kill -9 of clawd leaves nothing to enforce the timeout: the
		// shell (and a program it exec'd) must not run on unbounded.
		// What it forked is beyond this signal; the group's record
		// (groups) is what ends that at the next start (docs/security.md).
		ParentDeathKill: true,
		// A session of its own: the timeout and a cancel also end what
		// moved to another process group of it (`set -m`), and no
		// command can reach the terminal clawd may have.
		NewSession: true,
	}
	state, timedOut, err := runCmd(ctx, c, timeout, groups)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, tools.Errorf("could not start %s: %v", shell, err)
	}
	if ctx.Err() != nil && !timedOut {
		// Cancelled: the group is dead; the session answers "cancelled".
		return nil, ctx.Err()
	}
	res := &BashResult{ExitCode: exitStatus(state), TimedOut: timedOut}
	if timedOut {
		res.ExitCode = exitTimedOut
	}
	var t1, t2 bool
	res.Stdout, t1 = stdout.text()
	res.Stderr, t2 = stderr.text()
	res.Truncated = t1 || t2
	return res, nil
}

// workDir is the directory the command runs in: an open handle (obtained
// through the workspace Root) and the two names for it.
type workDir struct {
	f   *os.File
	cwd string // what the child chdirs to: /proc/self/fd/N where possible
	pwd string // the canonical absolute path, for $PWD
}

func openWorkDir(ctx context.Context, ws *sandbox.Workspace, p string) (*workDir, error) {
	rel, err := ws.Rel(p)
	if err != nil {
		return nil, err
	}
	f, err := openDir(ws, rel)
	if err != nil {
		return nil, workDirError(ws, p, rel, err)
	}
	if st, err := f.Stat(); err != nil || !st.IsDir() {
		f.Close()
		if err == nil {
			return nil, tools.Errorf("working_dir %q is not a directory (it is %s)", p, fileutil.Kind(st.Mode()))
		}
		return nil, fileError(p, err)
	}
	pwd := ""
	if fp, ok := fdPath(f); ok {
		if _, err := ws.Rel(fp); err == nil {
			pwd = fp
		}
	}
	if pwd == "" {
		r, err := ws.Resolve(ctx, rel)
		if err != nil {
			f.Close()
			return nil, err
		}
		pwd = ws.Abs(r)
	}
	cwd, ok := childDirOf(f)
	if !ok {
		// No /proc: the child chdirs by name. A symlink swapped in between
		// the open above and that chdir could redirect it; see docs/tools.md.
		cwd = pwd
	}
	return &workDir{f: f, cwd: cwd, pwd: pwd}, nil
}

func workDirError(ws *sandbox.Workspace, p, rel string, err error) error {
	switch {
	case sandbox.IsEscape(err):
		return sandbox.AsViolation(p, err)
	case errors.Is(err, fs.ErrNotExist):
		return tools.Errorf("working_dir %q does not exist; it must be an existing directory inside the workspace", p)
	case errors.Is(err, syscall.ENOTDIR):
		if st, e := ws.Root.Stat(rel); e == nil && !st.IsDir() {
			return tools.Errorf("working_dir %q is not a directory (it is %s)", p, fileutil.Kind(st.Mode()))
		}
	}
	return fileError(p, err)
}

// runCmd starts c and returns once the command is done and nothing of its
// process group (job object) is left running.
//
// The whole group is killed at the timeout, on ctx cancel, and also when
// bash exits normally (proc.Wait): a background child (`sleep 100 &`)
// would otherwise outlive the call and keep the output pipes open, so the
// call would hang until it exited. A process that left the group (setsid,
// `set -m` job control) is beyond a group kill; if it still holds a pipe,
// reading stops pipeGrace after the group is gone and the call returns
// without its remaining output. See internal/support/proc for the limits.
// progressEvery is how often a running bash call reports progress to a
// client that asked for it (a variable for tests).
var progressEvery = time.Second

func runCmd(ctx context.Context, c *proc.Cmd, timeout time.Duration, groups GroupRecorder) (*os.ProcessState, bool, error) {
	p, err := proc.Start(c)
	if err != nil {
		return nil, false, err
	}
	if groups != nil {
		// Until Wait the shell is not reaped, so its pid, the group's id,
		// is still its own; Wait kills the group before it returns.
		defer groups.Started(p.Pid())()
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	// A client that asked for progress hears every second how long the
	// command has run, against its timeout (total); others cost no ticker.
	var tick <-chan time.Time
	if tools.Reporting(ctx) {
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		tick = t.C
	}
	start := time.Now()
	timedOut := false
wait:
	for {
		select {
		case <-p.Exited():
		case <-timer.C:
			timedOut = true
			p.Kill()
		case <-ctx.Done():
			p.Kill()
		case <-tick:
			s := time.Since(start).Round(progressEvery)
			tools.ReportProgress(ctx, s.Seconds(), timeout.Seconds(), "running for "+s.String())
			continue
		}
		break wait
	}
	state, err := p.Wait()
	return state, timedOut, err
}

// capture keeps the first max bytes written to it and counts the rest, so
// the child can write any amount without blocking on a full pipe.
type capture struct {
	max   int
	buf   []byte
	total int64
}

func (c *capture) Write(p []byte) (int, error) {
	c.total += int64(len(p))
	if room := c.max - len(c.buf); room > 0 {
		c.buf = append(c.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// text returns the kept output as valid UTF-8 of at most max bytes, and
// whether anything was left out. A character cut by the cap is dropped;
// invalid bytes become U+FFFD, and if replacing them grows the text past the
// cap, the text is cut there (and reported truncated).
func (c *capture) text() (string, bool) {
	raw := c.buf
	truncated := c.total > int64(len(raw))
	if truncated {
		raw = trimPartialRune(raw)
	}
	if utf8.Valid(raw) {
		return string(raw), truncated
	}
	const repl = "\uFFFD"
	b := make([]byte, 0, len(raw)+16)
	for i := 0; i < len(raw); {
		r, size := utf8.DecodeRune(raw[i:])
		piece := raw[i : i+size]
		if r == utf8.RuneError && size == 1 {
			piece = []byte(repl)
		}
		if len(b)+len(piece) > c.max {
			truncated = true
			break
		}
		b = append(b, piece...)
		i += size
	}
	return string(b), truncated
}
