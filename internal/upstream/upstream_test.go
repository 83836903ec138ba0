//go:build unix

package upstream

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/support/race"
	"github.com/clawde/clawd/internal/tools"
	"github.com/clawde/clawd/test/clawdtest"
)

var fakeBin string

func TestMain(m *testing.M) {
	if bin := os.Getenv("UPSTREAM_HELPER_FAKE"); bin != "" { // TestKill9Sweep's stand-in for clawd
		fakeBin = bin
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "upstream-fake")
	if err != nil {
		panic(err)
	}
	if fakeBin, err = clawdtest.BuildFakeUpstream(dir, "fakeserver"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// builtins stands in for clawd's own tools; fake__echo collides with the
// fake server's echo on purpose.
func newTestManager(t *testing.T, opts Options) (*Manager, *tools.Registry) {
	t.Helper()
	reg := tools.NewRegistry(&tools.StaticProvider{Name: "builtin", Source: tools.BuiltinOrigin(),
		List: []tools.Tool{staticTool("read_file"), staticTool("fake__echo")}})
	if opts.StopGrace == 0 {
		opts.StopGrace = 300 * time.Millisecond
	}
	m := NewManager(reg, opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := m.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return m, reg
}

type staticTool string

func (s staticTool) Spec() *tools.Spec { return &tools.Spec{Name: string(s)} }
func (s staticTool) Call(context.Context, jsontext.Value) (any, error) {
	return nil, nil
}

func fake(name string, args ...string) ServerConfig {
	return ServerConfig{Name: name, Transport: TransportStdio, Command: fakeBin, Args: args, Enabled: true,
		ConnectTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second}
}

// waitFor polls Status until cond holds for the server, or fails after
// within.
func waitFor(t *testing.T, m *Manager, name string, within time.Duration, what string, cond func(Status) bool) Status {
	t.Helper()
	deadline := time.Now().Add(within)
	var last Status
	for {
		for _, st := range m.Status() {
			if st.Name == name {
				last = st
				if cond(st) {
					return st
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("server %s: not %s within %v; last status %+v", name, what, within, last)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func connected(t *testing.T, m *Manager, name string) Status {
	t.Helper()
	return waitFor(t, m, name, 20*time.Second, "connected", func(s Status) bool { return s.State == StateConnected })
}

func call(t *testing.T, reg *tools.Registry, name, args string) (any, error) {
	t.Helper()
	e, ok := reg.Lookup(name)
	if !ok {
		t.Fatalf("tool %s not in the registry (have %v)", name, reg.Names())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return e.Tool.Call(ctx, jsontext.Value(args))
}

func callText(t *testing.T, reg *tools.Registry, name, args string) string {
	t.Helper()
	res, err := call(t, reg, name, args)
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	r, ok := res.(*tools.CallResult)
	if !ok {
		t.Fatalf("call %s returned %T, want *tools.CallResult", name, res)
	}
	return string(r.Content)
}

// alive reports whether pid is a live (not zombie) process.
func alive(pid int) bool {
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z' && s[i+2] != 'X'
	}
	return true
}

func gone(t *testing.T, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("%s (pid %d) is still alive", what, pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(path)
		if err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				return pid
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in %s", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A server that prints banners on stdout keeps its session; its tools are
// exposed under {server}__{tool}, routed to the upstream's own name, with
// the collision with a built-in resolved and reported; results pass through
// raw, even a content type the go-sdk cannot decode.
func TestStdioBannerNamesAndPassThrough(t *testing.T) {
	t.Parallel()
	m, reg := newTestManager(t, Options{})
	m.Apply(context.Background(), []ServerConfig{fake("fake", "-banner")})
	st := connected(t, m, "fake")

	if st.PID <= 0 {
		t.Errorf("status has no pid: %+v", st)
	}
	byOrig := map[string]ToolInfo{}
	for _, ti := range st.Tools {
		byOrig[ti.Original] = ti
		if !validName.MatchString(ti.Exposed) || len(ti.Exposed) > 64 {
			t.Errorf("exposed name %q is not ^[A-Za-z0-9_-]{1,64}$", ti.Exposed)
		}
	}
	if got := byOrig["image"].Exposed; got != "fake__image" {
		t.Errorf("image exposed as %q, want fake__image", got)
	}
	echo := byOrig["echo"]
	if echo.Exposed == "fake__echo" || !strings.Contains(echo.Note, "built-in tool fake__echo") {
		t.Errorf("echo collides with the built-in fake__echo: got %q (note %q)", echo.Exposed, echo.Note)
	}
	odd := byOrig["Upper.Case!"]
	if !strings.HasPrefix(odd.Exposed, "fake__Upper_Case__") || odd.Note == "" {
		t.Errorf("Upper.Case! exposed as %q (note %q), want a hashed fake__Upper_Case__... name", odd.Exposed, odd.Note)
	}
	if e, ok := reg.Lookup("fake__echo"); !ok || e.Provider.ID() != "builtin" {
		t.Error("the built-in fake__echo was shadowed")
	}
	e, _ := reg.Lookup("fake__image")
	if o := e.Provider.Origin(); o.Kind != tools.OriginLocal || o.Path != fakeBin {
		t.Errorf("origin %v, want local:%s", o, fakeBin)
	}
	if e.Tool.Spec().Permission != tools.PermUpstream {
		t.Errorf("permission %q", e.Tool.Spec().Permission)
	}

	// Routed by the table: the renamed echo reaches the upstream's echo.
	if got := callText(t, reg, echo.Exposed, `{"x":"hi"}`); !strings.Contains(got, `{\"x\":\"hi\"}`) {
		t.Errorf("echo answered %s", got)
	}
	// The fake does not serve Upper.Case!; its error proves the call went
	// out under the original name.
	if _, err := call(t, reg, odd.Exposed, `{}`); err == nil || !strings.Contains(err.Error(), "unknown tool Upper.Case!") {
		t.Errorf("odd tool: %v, want the upstream's error for Upper.Case!", err)
	}
	res, err := call(t, reg, "fake__image", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	r := res.(*tools.CallResult)
	want := map[string]string{
		"content":           `[{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png","annotations":{"priority":0.5}},{"type":"x-future","payload":{"a":[1,2,3]}}]`,
		"structuredContent": `{"w":1,"h":1}`,
		"_meta":             `{"fake/trace":"abc"}`,
	}
	for k, got := range map[string]jsontext.Value{"content": r.Content, "structuredContent": r.StructuredContent, "_meta": r.Meta} {
		if string(got) != want[k] {
			t.Errorf("%s = %s, want byte for byte %s", k, got, want[k])
		}
	}
	if !r.IsError {
		t.Error("isError was lost")
	}
	if logs := string(m.Logs("fake")); !strings.Contains(logs, "skipped a non-JSON stdout line: Welcome to fakeserver") {
		t.Errorf("the banner is not in the logs: %q", logs)
	}
}

// Close ends the child and the grandchild it forked (which holds the
// child's stdout), and Apply without the server does too.
func TestGrandchildrenGone(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	m, _ := newTestManager(t, Options{})
	m.Apply(context.Background(), []ServerConfig{
		fake("a", "-grandchild", filepath.Join(dir, "a")),
		fake("b", "-grandchild", filepath.Join(dir, "b")),
	})
	pa, pb := connected(t, m, "a").PID, connected(t, m, "b").PID
	ga, gb := readPid(t, filepath.Join(dir, "a")), readPid(t, filepath.Join(dir, "b"))
	if !alive(ga) || !alive(gb) {
		t.Fatal("the grandchildren did not start")
	}
	m.Apply(context.Background(), []ServerConfig{fake("b", "-grandchild", filepath.Join(dir, "b"))})
	gone(t, pa, "server a after Apply removed it")
	gone(t, ga, "server a's grandchild after Apply removed it")
	if !alive(pb) || !alive(gb) {
		t.Fatal("removing a stopped b")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := m.Close(ctx); err != nil {
		t.Fatal(err)
	}
	gone(t, pb, "server b after Close")
	gone(t, gb, "server b's grandchild after Close")
	if err := syscall.Kill(-pb, 0); !errors.Is(err, syscall.ESRCH) {
		// Zombies of the group are reaped by init; wait for them.
		deadline := time.Now().Add(10 * time.Second)
		for syscall.Kill(-pb, 0) == nil && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// A server that never answers initialize holds up neither Apply nor
// another server: Apply returns, and the other server connects and
// answers, while the hung one still waits for its initialize. Its connect
// timeout is far longer than the bounds here, so a loaded machine cannot
// make them fail, while an Apply (or a connect of the good server) that
// waited for the hung server would wait minutes.
func TestHungInitializeIsolated(t *testing.T) {
	t.Parallel()
	m, reg := newTestManager(t, Options{MaxFailures: 1})
	dir := t.TempDir()
	hung := fake("hung", "-hang-init", "-pid-file", filepath.Join(dir, "hung"))
	hung.ConnectTimeout = MaxTimeout
	const bound = 30 * time.Second
	begin := time.Now()
	m.Apply(context.Background(), []ServerConfig{hung, fake("good")})
	if d := time.Since(begin); d > bound {
		t.Errorf("Apply took %v: it waited for a server", d)
	}
	waitFor(t, m, "good", bound, "connected", func(s Status) bool { return s.State == StateConnected })
	callText(t, reg, "good__echo", `{}`)
	readPid(t, filepath.Join(dir, "hung"))
	for _, st := range m.Status() {
		if st.Name == "hung" && st.State != StateConnecting {
			t.Errorf("the hung server is %v, want still connecting (%s)", st.State, st.LastError)
		}
	}
}

// A server that never answers initialize is bounded by its connect
// timeout, and its process is stopped.
func TestHungInitializeBounded(t *testing.T) {
	t.Parallel()
	m, _ := newTestManager(t, Options{MaxFailures: 1})
	dir := t.TempDir()
	hung := fake("hung", "-hang-init", "-pid-file", filepath.Join(dir, "hung"))
	begin := time.Now()
	m.Apply(context.Background(), []ServerConfig{hung})
	pid := readPid(t, filepath.Join(dir, "hung"))
	st := waitFor(t, m, "hung", hung.ConnectTimeout+30*time.Second, "in error", func(s Status) bool { return s.State == StateError })
	if d := time.Since(begin); d < hung.ConnectTimeout {
		t.Errorf("the hung initialize ended after %v, before its timeout of %v", d, hung.ConnectTimeout)
	}
	if !strings.Contains(st.LastError, "initialize") {
		t.Errorf("last error %q does not say initialize", st.LastError)
	}
	gone(t, pid, "the hung server after its connect timeout")
}

// A server that repeats its cursor is stopped after the first repeat;
// normal paging collects every page.
func TestToolsPaging(t *testing.T) {
	t.Parallel()
	m, _ := newTestManager(t, Options{MaxFailures: 1})
	m.Apply(context.Background(), []ServerConfig{fake("loop", "-repeat-cursor"), fake("paged", "-page-size", "2", "-tools", "5")})
	st := waitFor(t, m, "loop", 20*time.Second, "in error", func(s Status) bool { return s.State == StateError })
	if !strings.Contains(st.LastError, "repeated cursor") {
		t.Errorf("last error %q", st.LastError)
	}
	if st := connected(t, m, "paged"); st.ToolCount != 12 {
		t.Errorf("paged: %d tools, want 12 (7 + 5 over 6 pages)", st.ToolCount)
	}
	m2, _ := newTestManager(t, Options{MaxFailures: 1, MaxPages: 3})
	m2.Apply(context.Background(), []ServerConfig{fake("paged", "-page-size", "2", "-tools", "5")})
	st = waitFor(t, m2, "paged", 20*time.Second, "in error", func(s Status) bool { return s.State == StateError })
	if !strings.Contains(st.LastError, "more than 3 pages") {
		t.Errorf("page cap: last error %q", st.LastError)
	}
}

// A server whose tools take more room than any real server's does not get
// them kept (each definition is held in memory several times and recorded
// in the database): the walk stops at 32 MiB of answers, however they are
// split into pages and tools.
func TestToolsListSizeCap(t *testing.T) {
	t.Parallel()
	m, _ := newTestManager(t, Options{MaxFailures: 1})
	// 47 tools of 1 MiB each, 5 to a page: every page fits in a line.
	cfg := fake("fat", "-tools", "40", "-page-size", "5", "-desc-bytes", strconv.Itoa(1<<20))
	cfg.ReadTimeout *= race.Slowdown // a 5 MiB page takes seconds under the race detector
	m.Apply(context.Background(), []ServerConfig{cfg})
	st := waitFor(t, m, "fat", 30*time.Second*race.Slowdown, "in error", func(s Status) bool { return s.State == StateError || s.State == StateConnected })
	if st.State != StateError || !strings.Contains(st.LastError, "32 MiB") {
		t.Errorf("a 47 MiB tool list: state %s, last error %q; want an error naming the 32 MiB cap", st.State, st.LastError)
	}
}

// A server that says its tools changed after every listing does not keep
// clawd listing them (and re-evaluating, recording and auditing their
// definitions) as fast as it can answer: list_changed is acted on at most
// once a second.
func TestListChangedFlood(t *testing.T) {
	t.Parallel()
	ap := &fakeApprovals{seen: map[string]string{}, approved: map[string]string{}}
	m, _ := newTestManager(t, Options{CheckTools: ap.check})
	m.Apply(context.Background(), []ServerConfig{fake("noisy", "-relist")})
	connected(t, m, "noisy")
	ap.mu.Lock()
	before := ap.calls
	ap.mu.Unlock()
	time.Sleep(2 * time.Second)
	ap.mu.Lock()
	n := ap.calls - before
	ap.mu.Unlock()
	if n > 4 {
		t.Errorf("the tools were looked at %d times in 2 s of list_changed, want at most one a second", n)
	}
}

// A walk that takes long (a slow server, or definitions that are costly
// to pin) is followed by a pause four times as long before list_changed is
// acted on again, so a server cannot keep one of clawd's cores busy with
// its listings.
func TestListChangedSlowWalks(t *testing.T) {
	t.Parallel()
	ap := &fakeApprovals{seen: map[string]string{}, approved: map[string]string{}}
	m, _ := newTestManager(t, Options{CheckTools: ap.check})
	m.Apply(context.Background(), []ServerConfig{fake("slowlist", "-relist", "-list-delay", "700ms")})
	connected(t, m, "slowlist")
	ap.mu.Lock()
	before := ap.calls
	ap.mu.Unlock()
	time.Sleep(4 * time.Second)
	ap.mu.Lock()
	n := ap.calls - before
	ap.mu.Unlock()
	if n > 2 {
		t.Errorf("walks of 700 ms each were made %d times in 4 s, want a pause of four times a walk between them", n)
	}
}

// The upstream's list_changed refreshes the cache and signals the
// registry; Tools() itself never asks the upstream.
func TestListChanged(t *testing.T) {
	t.Parallel()
	m, reg := newTestManager(t, Options{})
	var events atomic.Int64
	reg.Subscribe(func() { events.Add(1) })
	m.Apply(context.Background(), []ServerConfig{fake("lc")})
	pid := connected(t, m, "lc").PID

	// tools/list is served from the cache: with the upstream frozen
	// (SIGSTOP), listing still answers at once with its tools.
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// About a millisecond; the bound is far above it, scaled under the
	// race detector, and checked as it goes: a listing that asked the
	// upstream would wait its read timeout.
	begin := time.Now()
	for i := range 1000 {
		if n := len(reg.All()); n < 8 {
			t.Fatalf("%d tools listed while the upstream is stopped", n)
		}
		if d := time.Since(begin); d > 2*time.Second*race.Slowdown {
			t.Fatalf("%d listings took %v with the upstream stopped", i+1, d)
		}
	}
	syscall.Kill(pid, syscall.SIGCONT)

	before := events.Load()
	callText(t, reg, "lc__change", `{}`)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, ok := reg.Lookup("lc__added7"); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tool the upstream added never appeared: %v", reg.Names())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if events.Load() <= before {
		t.Error("no change event reached the registry's subscribers")
	}
}

// Cancelling a call returns at once and reaches the upstream as
// notifications/cancelled for that request.
func TestCancellationReachesUpstream(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cf := filepath.Join(dir, "cancelled")
	m, reg := newTestManager(t, Options{})
	m.Apply(context.Background(), []ServerConfig{fake("c", "-cancel-file", cf)})
	connected(t, m, "c")
	e, _ := reg.Lookup("c__slow")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	begin := time.Now()
	_, err := e.Tool.Call(ctx, jsontext.Value(`{}`))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v, want context.Canceled", err)
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Errorf("the cancelled call returned after %v", d)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(cf)
		if len(strings.TrimSpace(string(b))) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the upstream never saw notifications/cancelled for the call")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A server that crashes is restarted with backoff, never two processes at
// once, and after MaxFailures crashes in a row it is left in error with its
// tools hidden, until Refresh.
func TestCrashReconnectThenError(t *testing.T) {
	t.Parallel()
	m, reg := newTestManager(t, Options{MaxFailures: 3, BackoffBase: 100 * time.Millisecond})
	m.Apply(context.Background(), []ServerConfig{fake("crash", "-crash-after", "1")})
	var pids []int
	for i := 0; i < 3; i++ {
		st := connected(t, m, "crash")
		for _, p := range pids {
			if p == st.PID {
				t.Fatalf("pid %d reused as if not restarted", p)
			}
			if alive(p) {
				t.Errorf("an earlier process %d is alive next to %d", p, st.PID)
			}
		}
		pids = append(pids, st.PID)
		callText(t, reg, "crash__echo", `{}`)
		if _, err := call(t, reg, "crash__echo", `{}`); err == nil {
			t.Fatal("the crashing call succeeded")
		} else if te := (*tools.ToolError)(nil); !errors.As(err, &te) {
			t.Errorf("crash: %v (%T), want a tool error", err, err)
		}
		if i < 2 {
			waitFor(t, m, "crash", 10*time.Second, "off connected", func(s Status) bool { return s.PID != pids[i] })
		}
	}
	st := waitFor(t, m, "crash", 20*time.Second, "in error", func(s Status) bool { return s.State == StateError })
	if !strings.Contains(st.LastError, "exited") {
		t.Errorf("last error %q", st.LastError)
	}
	if _, ok := reg.Lookup("crash__image"); ok {
		t.Error("a server in error still offers its tools")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := m.Refresh(ctx, "crash"); err != nil {
		t.Fatalf("Refresh: %v", err)
	}
	// Tools are in the registry before the status says connected
	// (server.install), so no waiting here.
	connected(t, m, "crash")
	if _, ok := reg.Lookup("crash__image"); !ok {
		t.Error("Refresh did not bring the tools back")
	}
}

// Env values are resolved at spawn from ${VAR} and masked in logs and
// errors; the stderr ring stays bounded under a flood.
func TestEnvResolvedAndLogsMasked(t *testing.T) {
	t.Parallel()
	const secret = "hunter2-but-longer"
	env := map[string]string{"UPSTREAM_TEST_SECRET": secret}
	m, reg := newTestManager(t, Options{LogBytes: 4096, LookupEnv: func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}})
	cfg := fake("env", "-print-env", "MY_TOKEN", "-stderr-flood", "1000000")
	cfg.Env = map[string]string{"MY_TOKEN": "${UPSTREAM_TEST_SECRET}", "PLAIN": "pre-$UPSTREAM_TEST_SECRET", "DOLLAR": "pa$$word-$$UPSTREAM_TEST_SECRET"}
	m.Apply(context.Background(), []ServerConfig{cfg})
	connected(t, m, "env")
	if got := callText(t, reg, "env__env", `{"x":"MY_TOKEN"}`); !strings.Contains(got, secret) {
		t.Errorf("the child got MY_TOKEN=%s, want the resolved secret", got)
	}
	if got := callText(t, reg, "env__env", `{"x":"PLAIN"}`); !strings.Contains(got, "pre-"+secret) {
		t.Errorf("the child got PLAIN=%s", got)
	}
	// "$$" is a literal '$', never the start of a reference.
	if got := callText(t, reg, "env__env", `{"x":"DOLLAR"}`); !strings.Contains(got, "pa$word-$UPSTREAM_TEST_SECRET") || strings.Contains(got, secret) {
		t.Errorf("the child got DOLLAR=%s, want pa$word-$UPSTREAM_TEST_SECRET", got)
	}
	logs := m.Logs("env")
	if len(logs) > 4096+64 {
		t.Errorf("logs are %d bytes, want at most the ring's 4096", len(logs))
	}
	if strings.Contains(string(logs), "sk-abcdefghijklmnop0123456789") {
		t.Error("a secret-looking value in stderr was not masked")
	}
	if !strings.Contains(string(logs), "the end") {
		t.Errorf("the tail of stderr is missing: %q", logs[max(0, len(logs)-200):])
	}
	// The start of the flood (with MY_TOKEN) is gone from the ring; check
	// masking of the env value with a fresh small server.
	cfg2 := fake("env2", "-print-env", "MY_TOKEN")
	cfg2.Env = cfg.Env
	m.Apply(context.Background(), []ServerConfig{cfg, cfg2})
	connected(t, m, "env2")
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(string(m.Logs("env2")), "MY_TOKEN=") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if l := string(m.Logs("env2")); strings.Contains(l, secret) || !strings.Contains(l, "MY_TOKEN=*") {
		t.Errorf("env value not masked in logs: %q", l)
	}

	// An unset variable makes the server unavailable, naming it.
	bad := fake("bad")
	bad.Env = map[string]string{"X": "${NOT_SET_ANYWHERE}"}
	m.Apply(context.Background(), []ServerConfig{cfg, cfg2, bad})
	st := waitFor(t, m, "bad", 10*time.Second, "unavailable", func(s Status) bool { return s.State == StateUnavailable })
	if !strings.Contains(st.LastError, "NOT_SET_ANYWHERE") {
		t.Errorf("last error %q does not name the variable", st.LastError)
	}
}

// A legacy server that exits on server/discover still connects: clawd
// initializes with 2025-11-25 and never sends server/discover.
func TestNoDiscoverFirst(t *testing.T) {
	t.Parallel()
	m, reg := newTestManager(t, Options{MaxFailures: 1})
	m.Apply(context.Background(), []ServerConfig{fake("legacy", "-exit-on-discover")})
	connected(t, m, "legacy")
	callText(t, reg, "legacy__echo", `{}`)
}

// A replacement that fails leaves the old server serving; one that works
// is swapped in and the old process stopped.
func TestReplace(t *testing.T) {
	t.Parallel()
	m, reg := newTestManager(t, Options{MaxFailures: 1})
	old := fake("r")
	m.Apply(context.Background(), []ServerConfig{old})
	pid := connected(t, m, "r").PID
	broken := fake("r", "-hang-init")
	m.Apply(context.Background(), []ServerConfig{broken})
	st := waitFor(t, m, "r", 20*time.Second, "told the replacement failed", func(s Status) bool {
		return strings.Contains(s.LastError, "not applied")
	})
	if st.PID != pid || st.State != StateConnected {
		t.Errorf("after a failed replacement: %+v, want the old pid %d connected", st, pid)
	}
	callText(t, reg, "r__echo", `{}`)
	m.Apply(context.Background(), []ServerConfig{fake("r", "-banner")})
	waitFor(t, m, "r", 20*time.Second, "replaced", func(s Status) bool { return s.PID != pid && s.State == StateConnected })
	gone(t, pid, "the replaced server")
	callText(t, reg, "r__echo", `{}`)
}

// Output over the cap is cut with a marker.
func TestOutputCapped(t *testing.T) {
	t.Parallel()
	m, reg := newTestManager(t, Options{MaxOutputBytes: 10000})
	m.Apply(context.Background(), []ServerConfig{fake("big")})
	connected(t, m, "big")
	got := callText(t, reg, "big__big", `{}`)
	if len(got) > 11000 || !strings.Contains(got, "over the limit") {
		t.Errorf("capped result is %d bytes: %.200s", len(got), got)
	}
	if small := callText(t, reg, "big__echo", `{}`); strings.Contains(small, "clawd:") {
		t.Errorf("a small result was touched: %s", small)
	}
}

func TestConfigValidation(t *testing.T) {
	for _, c := range []struct {
		cfg  ServerConfig
		want string
	}{
		{ServerConfig{Name: "", Transport: TransportStdio, Command: "x"}, "server name"},
		{ServerConfig{Name: "a", Transport: "ftp"}, "use stdio, http or sse"},
		{ServerConfig{Name: "a", Transport: TransportStdio}, "needs a command"},
		{ServerConfig{Name: "a", Transport: TransportHTTP, URL: "ftp://x"}, "http:// or https://"},
		{ServerConfig{Name: "a", Transport: TransportHTTP, URL: "https://u:p@x/"}, "not in the url"},
		{ServerConfig{Name: "a", Transport: TransportStdio, Command: "x", ReadTimeout: time.Second}, "5-300 seconds"},
		{ServerConfig{Name: "a", Transport: TransportHTTP, URL: "https://x/", Headers: map[string]string{"A": "b\r\nX: y"}}, "not a valid HTTP header"},
		// Names are identifiers, as the store has them: bash imports a
		// function only from BASH_FUNC_name%% (BASH_FUNC_name() in some
		// vendors' bash), never from an identifier.
		{ServerConfig{Name: "a", Transport: TransportStdio, Command: "x", Env: map[string]string{"BASH_FUNC_ls%%": "() { evil; }"}}, "not a valid variable name"},
		{ServerConfig{Name: "a", Transport: TransportStdio, Command: "x", Env: map[string]string{"BASH_FUNC_ls()": "() { evil; }"}}, "not a valid variable name"},
		{ServerConfig{Name: "a", Transport: TransportStdio, Command: "x", Env: map[string]string{"1X": "y"}}, "not a valid variable name"},
	} {
		if err := c.cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
	if err := fake("ok").Validate(); err != nil {
		t.Errorf("valid config: %v", err)
	}
}

// A refused URL is named as MaskURL shows it: its query value or password
// never comes back in the error.
func TestConfigValidationMasksTheURL(t *testing.T) {
	for _, u := range []string{"ftp://x/mcp?key=hunter2xyz", "https://u:hunter2xyz@/mcp", "mcp?key=hunter2xyz"} {
		err := ServerConfig{Name: "a", Transport: TransportHTTP, URL: u}.Validate()
		if err == nil || strings.Contains(err.Error(), "hunter2xyz") {
			t.Errorf("%s: %v", u, err)
		}
	}
}

// A disabled server has a status but no provider and no process; enabling
// it connects it, disabling it again removes its tools.
func TestDisabledAndInvalid(t *testing.T) {
	t.Parallel()
	m, reg := newTestManager(t, Options{})
	off := fake("off")
	off.Enabled = false
	invalid := ServerConfig{Name: "inv", Transport: TransportStdio, Enabled: true}
	m.Apply(context.Background(), []ServerConfig{off, invalid})
	sts := m.Status()
	if len(sts) != 2 || sts[1].State != StateDisabled || sts[0].State != StateUnavailable || !strings.Contains(sts[0].LastError, "needs a command") {
		t.Fatalf("statuses %+v", sts)
	}
	// StatusOf answers for one server what Status lists for it.
	if st, ok := m.StatusOf("off"); !ok || st.Name != "off" || st.State != StateDisabled {
		t.Errorf("StatusOf(off) = %+v, %v", st, ok)
	}
	if st, ok := m.StatusOf("inv"); !ok || st.State != sts[0].State || st.LastError != sts[0].LastError {
		t.Errorf("StatusOf(inv) = %+v, %v; Status has %+v", st, ok, sts[0])
	}
	if _, ok := m.StatusOf("nope"); ok {
		t.Error("StatusOf of an unknown server said ok")
	}
	for _, p := range reg.Providers() {
		if p.ID() == "off" || p.ID() == "inv" {
			t.Errorf("provider %s registered", p.ID())
		}
	}
	ctx := context.Background()
	if err := m.Refresh(ctx, "off"); err == nil || !strings.Contains(err.Error(), "disabled") {
		t.Errorf("Refresh of a disabled server: %v", err)
	}
	if err := m.Refresh(ctx, "nope"); !errors.Is(err, ErrUnknownServer) {
		t.Errorf("Refresh of an unknown server: %v", err)
	}
	off.Enabled = true
	m.Apply(ctx, []ServerConfig{off})
	pid := connected(t, m, "off").PID
	callText(t, reg, "off__echo", `{}`)
	off.Enabled = false
	m.Apply(ctx, []ServerConfig{off})
	waitFor(t, m, "off", 10*time.Second, "disabled", func(s Status) bool { return s.State == StateDisabled })
	gone(t, pid, "a disabled server's process")
	if _, ok := reg.Lookup("off__echo"); ok {
		t.Error("a disabled server's tool is still offered")
	}
}

// Test connects a throwaway client and reports the tools and latency;
// nothing is registered and its process is gone after.
func TestTestConnection(t *testing.T) {
	t.Parallel()
	m, reg := newTestManager(t, Options{})
	n := len(reg.Names())
	res, err := m.Test(context.Background(), fake("probe", "-banner"))
	if err != nil {
		t.Fatal(err)
	}
	if res.ServerName != "fake" || res.ProtocolVersion != clientProtocol || len(res.Tools) != 7 || res.Latency <= 0 {
		t.Errorf("test result %+v", res)
	}
	if len(reg.Names()) != n || len(m.Status()) != 0 {
		t.Error("Test registered something")
	}
	if _, err := m.Test(context.Background(), fake("bad", "-hang-init")); err == nil || !strings.Contains(err.Error(), "initialize") {
		t.Errorf("Test of a hung server: %v", err)
	}
	bad := fake("nocmd")
	bad.Command = "clawd-no-such-command-xyz"
	if _, err := m.Test(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("Test of a missing command: %v", err)
	}
}

// VerifyLaunch refuses a binary before it ever runs; OnStatus hears
// the states in order.
func TestVerifyLaunchAndOnStatus(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var states []string
	var mu = make(chan struct{}, 1)
	mu <- struct{}{}
	m, _ := newTestManager(t, Options{
		VerifyLaunch: func(server string, _ Launch) error {
			if server == "unvetted" {
				return errors.New("sha256 not allowlisted")
			}
			return nil
		},
		OnStatus: func(s Status) {
			<-mu
			if s.Name == "vetted" && (len(states) == 0 || states[len(states)-1] != s.State) {
				states = append(states, s.State)
			}
			mu <- struct{}{}
		},
	})
	m.Apply(context.Background(), []ServerConfig{fake("unvetted", "-pid-file", filepath.Join(dir, "pid")), fake("vetted")})
	st := waitFor(t, m, "unvetted", 10*time.Second, "unavailable", func(s Status) bool { return s.State == StateUnavailable })
	if !strings.Contains(st.LastError, "not allowlisted") {
		t.Errorf("last error %q", st.LastError)
	}
	if _, err := os.Stat(filepath.Join(dir, "pid")); err == nil {
		t.Error("the refused binary ran")
	}
	connected(t, m, "vetted")
	var got string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		<-mu
		got = strings.Join(states, ",")
		mu <- struct{}{}
		if strings.HasSuffix(got, StateConnected) {
			break
		}
	}
	if !strings.HasSuffix(got, StateConnected) || !strings.Contains(got, StateConnecting) {
		t.Errorf("OnStatus states %q, want connecting ... connected", got)
	}
}

// BenchmarkStdioCall is one tools/call through the provider to the fake
// stdio server and back (the upstream's own work is nil).
func BenchmarkStdioCall(b *testing.B) {
	reg := tools.NewRegistry()
	m := NewManager(reg, Options{StopGrace: 300 * time.Millisecond})
	defer m.Close(context.Background())
	m.Apply(context.Background(), []ServerConfig{fake("bench")})
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if st := m.Status(); len(st) == 1 && st[0].State == StateConnected {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("not connected")
		}
	}
	e, _ := reg.Lookup("bench__echo")
	args := jsontext.Value(`{"x":"hello"}`)
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		if _, err := e.Tool.Call(ctx, args); err != nil {
			b.Fatal(err)
		}
	}
}

// TestStatusErrorIsOneLine: an upstream's error text becomes last_error
// on one line, masked: a newline in it would print, under mcp list or mcp
// test, lines that look like clawd's own output.
func TestStatusErrorIsOneLine(t *testing.T) {
	m, _ := newTestManager(t, Options{})
	s := newServer(m, fake("multi"), nil)
	s.noteErr(errors.New("initialize failed: boom\nApproved multi.\r\n\x1b[2Jtoken sk-abcdefghijklmnop1234"))
	st := s.status()
	if strings.ContainsAny(st.LastError, "\r\n\x1b") {
		t.Fatalf("last error %q spans lines or carries escapes", st.LastError)
	}
	if !strings.Contains(st.LastError, "boom") || strings.Contains(st.LastError, "abcdefghijklmnop1234") {
		t.Fatalf("last error %q: want the text kept and the secret masked", st.LastError)
	}
}
