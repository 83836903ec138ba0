package upstream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawde/clawd/internal/support/proc"
	"github.com/clawde/clawd/internal/support/rawio"
	"github.com/clawde/clawd/internal/support/secrets"
)

// maxLine bounds one line of a stdio server's stdout; a longer line is
// discarded (and logged) up to its newline instead of growing memory.
const maxLine = 16 << 20

// resolveCommand finds the executable a stdio server runs, as exec.LookPath
// does (a name without a slash is searched in PATH, relative to cwd
// otherwise), and returns its absolute path with symlinks resolved: the
// path the supply-chain step hashes is the file that actually runs.
func resolveCommand(command, cwd string) (string, error) {
	path := command
	if !filepath.IsAbs(path) && filepath.Base(path) != path && cwd != "" {
		path = filepath.Join(cwd, path)
	}
	found, err := exec.LookPath(path)
	if err != nil {
		return "", fmt.Errorf("command %q not found: install it, or give its full path (%w)", command, err)
	}
	abs, err := filepath.Abs(found)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	return abs, nil
}

// testHookBeforeExec, set by tests only, runs after the executable was
// hashed and approved and before it is executed: a test swaps the file
// there to show the swapped file never runs.
var testHookBeforeExec func(path string)

// stdioTransport is a go-sdk mcp.Transport that runs a server through
// internal/support/proc instead of the SDK's CommandTransport, which kills
// only the direct child (an npx-started server's node survives) and ends
// the session on the first stdout line that is not JSON (a banner). Here
// the child leads its own process group, gets the scrubbed environment
// plus the server's resolved Env, dies with clawd on Linux
// (proc.Cmd.ParentDeathKill), has its stderr kept in a bounded ring, and
// Close stops the whole group (close stdin, SIGTERM, SIGKILL).
type stdioTransport struct {
	path      string      // resolved executable
	exe       *os.File    // path, opened and hashed: what is executed; closed by Connect
	exeBefore os.FileInfo // exe's state before it was hashed
	exeSum    string      // exe's hash, as approved
	hasher    FileHasher  // hashes exe again if its change time moved
	args      []string    // arguments
	dir       string
	env       []string // NAME=value, resolved
	stderr    io.Writer
	grace     time.Duration
	logger    *slog.Logger
	// mask, if set, masks a stdout noise line for the log (else
	// secrets.MaskText alone).
	mask     func(string) string
	started  func(*proc.Process) // called once the child runs
	ended    func()              // called once it has been reaped
	progress *progressRoutes     // the session's: reports routed as read
}

func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	if t.exe != nil {
		defer t.exe.Close() // the child has its own copy
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if testHookBeforeExec != nil {
		testHookBeforeExec(t.path)
	}
	p, err := proc.Start(&proc.Cmd{
		Path: t.path, Args: t.args, Dir: t.dir, Env: t.env,
		StdinPipe: true, StdoutPipe: true, Stderr: t.stderr,
		ParentDeathKill: true, ExecFile: t.exe,
	})
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", t.path, err)
	}
	if t.exe != nil && t.exeBefore != nil && !unchangedSince(t.exe, t.exeBefore, t.hasher, t.exeSum) {
		// Written to in place between the hash and the exec: what runs may
		// not be what was approved. Stop it before a single request.
		p.Kill()
		p.Wait()
		return nil, fmt.Errorf("supply_chain_unverified: %s was written to between its check and its start, so it was stopped; the next start checks it again", t.path)
	}
	if t.started != nil {
		t.started(p)
	}
	c := &stdioConn{p: p, grace: t.grace, logger: t.logger, mask: t.mask, stderr: t.stderr, ended: t.ended, progress: t.progress,
		writeSem: make(chan struct{}, 1), writeStall: stdinWriteStall, writesStopped: make(chan struct{}), incoming: make(chan jsonrpc.Message), closed: make(chan struct{}), readDone: make(chan struct{})}
	if f, ok := p.Stdin().(*os.File); ok {
		c.stdinNow = rawio.New(f)
	}
	c.out = newStdoutReader(p.Stdout())
	go c.readLoop()
	go c.watchExit()
	return c, nil
}

// envList turns the resolved env map into NAME=value entries, sorted so a
// child's environment does not depend on map order.
func envList(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// stdioConn is the connection to one child: newline-delimited JSON-RPC on
// its stdin and stdout.
type stdioConn struct {
	p      *proc.Process
	grace  time.Duration
	logger *slog.Logger
	mask   func(string) string
	stderr io.Writer
	ended  func()
	endOne sync.Once

	writeSem      chan struct{} // holds one token while a line is written (writeLine)
	stdinNow      *rawio.File   // the child's stdin, for writes that need no wait (nil: every write takes the bounded path)
	writeBroken   error         // under writeSem: set once a write left part of a line in the pipe
	writeStall    time.Duration // stdinWriteStall (tests shorten it)
	stopOnce      sync.Once
	writesStopped chan struct{} // closed by stopWriting: the session is closing

	// calls and progress are clawd's own traffic on the connection
	// (stdiocall.go); the reader routes it before the SDK sees anything.
	calls    directCalls
	progress *progressRoutes

	out         *stdoutReader // reading stdout (stdioread.go)
	incoming    chan jsonrpc.Message
	serverCalls atomic.Int32 // the server's requests handed to the SDK and not yet answered
	readErr     error        // set before readDone closes (readOne)
	readDone    chan struct{}

	closeOnce sync.Once
	closed    chan struct{}
	closeErr  error
}

func (c *stdioConn) SessionID() string { return "" }

// watchExit ends the session when the child exits, even if a grandchild
// still holds its stdout open (so EOF would never come): Wait kills what
// is left of the group and reaps the child, and if stdout is still open a
// second later, the read is cut.
func (c *stdioConn) watchExit() {
	<-c.p.Exited()
	c.p.Wait()
	c.reaped()
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select {
	case <-c.readDone:
	case <-t.C:
		c.out.cutForEver()
	}
}

// handleLine routes one line of stdout (stdioread.go has who reads it).
// When abort closes while a message waits for the SDK to take it, the
// message is handed over by a goroutine of its own instead: a call reading
// its own answer must not wait on the SDK past its own end.
func (c *stdioConn) handleLine(line []byte, abort <-chan struct{}) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	var msgs []jsonrpc.Message
	switch line[0] {
	case '{':
		if c.routeDirect(line) {
			return
		}
		if err := checkJSONBounds(line); err != nil {
			c.noise("a stdout message was skipped: " + err.Error())
			return
		}
		m, err := jsonrpc.DecodeMessage(line)
		if err != nil {
			c.noise("a stdout line is not a JSON-RPC message: " + err.Error())
			return
		}
		msgs = append(msgs, m)
	case '[':
		batch, err := batchMembers(line)
		if err != nil {
			c.noise("a stdout line was skipped: " + err.Error())
			return
		}
		for _, raw := range batch {
			if c.routeDirect(raw) {
				continue
			}
			if err := checkJSONBounds(raw); err != nil {
				c.noise("a batch member was skipped: " + err.Error())
				continue
			}
			m, err := jsonrpc.DecodeMessage(raw)
			if err != nil {
				c.noise("a batch member is not a JSON-RPC message: " + err.Error())
				continue
			}
			msgs = append(msgs, m)
		}
	default:
		c.noise("skipped a non-JSON stdout line: " + string(clip(line, 200)))
		return
	}
	for _, m := range msgs {
		if r, ok := m.(*jsonrpc.Request); ok && r.IsCall() {
			if c.serverCalls.Add(1) > maxServerCalls {
				c.serverCalls.Add(-1)
				c.noise("a request of the server's (" + string(clip([]byte(r.Method), 64)) + ") was dropped: " +
					strconv.Itoa(maxServerCalls) + " of its requests already wait for clawd's answers, which it is not reading")
				continue
			}
		}
		select {
		case c.incoming <- m:
		case <-c.closed:
			return
		case <-abort:
			go func() {
				select {
				case c.incoming <- m:
				case <-c.closed:
				}
			}()
		}
	}
}

// maxUpstreamBatch bounds the messages of one JSON-RPC batch a stdio
// server writes, as clawd bounds its own clients' batches: each message
// the SDK decodes costs about 10 us and 30 KB however small it is, so one
// 16 MiB line of a million empty members took over a minute of CPU.
const maxUpstreamBatch = 64

// batchMembers splits a batch line into its members (each still to be
// checked alone), refusing one that is not a JSON array or holds more than
// maxUpstreamBatch members: it stops reading at the first one too many.
func batchMembers(line []byte) ([]jsontext.Value, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(line), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '[' {
		return nil, errors.New("it is not a JSON-RPC batch")
	}
	var members []jsontext.Value
	for dec.PeekKind() != ']' {
		if len(members) == maxUpstreamBatch {
			return nil, fmt.Errorf("a batch of more than %d messages (clawd reads at most %d in one line)", maxUpstreamBatch, maxUpstreamBatch)
		}
		v, err := dec.ReadValue()
		if err != nil {
			return nil, fmt.Errorf("it is not a JSON-RPC batch: %w", err)
		}
		members = append(members, v.Clone())
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, fmt.Errorf("it is not a JSON-RPC batch: %w", err)
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, errors.New("it is not a JSON-RPC batch: something follows the array")
	}
	return members, nil
}

// maxServerCalls bounds the server's own requests (ping, roots/list...)
// that clawd has taken and not yet answered. The SDK answers each in a
// goroutine of its own, and the answer waits for room in the child's stdin
// pipe: a server that sends requests without end and never reads the
// answers would hold a goroutine and an answer of clawd's per request, for
// as long as the session lasts. Past the bound a request is dropped (it
// goes unanswered; the session goes on). A server that reads its stdin
// has its answers at once, so sixteen is plenty.
const maxServerCalls = 16

// noise records a skipped stdout line in the stderr ring (so `clawd mcp
// logs` shows it) and the log.
func (c *stdioConn) noise(msg string) {
	// The ring is masked when read; the log line here, with the values of
	// every configured server (a server prints what it inherited too).
	if c.logger.Enabled(context.Background(), slog.LevelDebug) {
		mask := secrets.MaskText
		if c.mask != nil {
			mask = c.mask // MaskText after the values
		}
		c.logger.Debug("upstream stdout noise", "msg", mask(msg))
	}
	if c.stderr != nil {
		fmt.Fprintf(c.stderr, "[clawd] %s\n", msg)
	}
}

func clip(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m := <-c.incoming:
		return m, nil
	case <-c.readDone:
		// Drain what was queued before EOF is reported: none can be,
		// incoming is unbuffered.
		return nil, c.readErr
	case <-c.closed:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if _, ok := msg.(*jsonrpc.Response); ok {
		// The answer to one of the server's requests: it no longer
		// counts against maxServerCalls, whether or not it gets through
		// (before the check below, so a cancelled answer frees its slot).
		defer c.serverCalls.Add(-1)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encoding a message for the upstream: %w", err)
	}
	if r, ok := msg.(*jsonrpc.Request); ok && r.IsCall() {
		c.sdkRequest() // its answer is read at once
	}
	return c.writeLine(ctx, append(data, '\n'))
}

// reaped reports, once, that the child has been reaped (its record can go).
func (c *stdioConn) reaped() {
	c.endOne.Do(func() {
		if c.ended != nil {
			c.ended()
		}
	})
}

// Close stops the child and its whole process group (proc.Process.Stop:
// close stdin, SIGTERM to the group, SIGKILL) and reaps it. It may be
// called more than once; all calls wait for the stop.
func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		// A write blocked on a full pipe returns when Stop closes stdin.
		_, err := c.p.Stop(c.grace)
		c.reaped() // before Close returns, so a stopped manager leaves no record
		c.p.Stdout().Close()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			c.closeErr = err
		}
	})
	return c.closeErr
}
