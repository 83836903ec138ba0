package proc

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// runFile starts path by the open descriptor f and returns its stdout.
func runFile(t *testing.T, path string, f *os.File, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	p, err := Start(&Cmd{Path: path, Args: args, ExecFile: f, Stdout: &out, Stderr: io.Discard})
	if err != nil {
		return "", err
	}
	st, err := p.Wait()
	if err != nil {
		return out.String(), err
	}
	if !st.Success() {
		return out.String(), &os.PathError{Op: "exit", Path: path, Err: os.ErrInvalid}
	}
	return out.String(), nil
}

// swapIn renames a new file with content over path, as an attacker or an
// updater would: the opened descriptor keeps the old inode.
func swapIn(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// openThenSwap writes content to path, opens it (the descriptor a caller
// hashes and runs; closed when the test ends) and then renames a script
// printing "swapped" over path.
func openThenSwap(t *testing.T, path string, content []byte) *os.File {
	t.Helper()
	if err := os.WriteFile(path, content, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	swapIn(t, path, "#!/bin/sh\necho swapped\n", 0o755)
	return f
}

// An ELF program opened, then replaced by a script: the opened one runs.
// Without exec by descriptor the child would print "swapped".
func TestExecFileRunsTheOpenedBinary(t *testing.T) {
	echo := lookPath(t, "echo")
	dir := t.TempDir()
	path := filepath.Join(dir, "server")
	b, err := os.ReadFile(echo)
	if err != nil {
		t.Skipf("cannot read %s: %v", echo, err)
	}
	f := openThenSwap(t, path, b)
	out, err := runFile(t, path, f, "approved")
	if err != nil {
		t.Fatalf("run: %v (output %q)", err, out)
	}
	if strings.TrimSpace(out) != "approved" {
		t.Fatalf("output %q; want the opened binary's \"approved\", never the swapped file's", out)
	}
	// The swapped file itself does run by path: the test's swap is real.
	var direct bytes.Buffer
	p, err := Start(&Cmd{Path: path, Stdout: &direct})
	if err != nil {
		t.Fatal(err)
	}
	p.Wait()
	if strings.TrimSpace(direct.String()) != "swapped" {
		t.Fatalf("running the path gives %q; want the swapped script's output", direct.String())
	}
}

// A #! script opened, then replaced: the kernel hands the interpreter
// /proc/self/fd/3, which it can open because the descriptor is inherited
// without close-on-exec, and which is the opened script.
func TestExecFileRunsTheOpenedScript(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "server.sh")
	f := openThenSwap(t, path, []byte("#!/bin/sh\necho approved \"$@\"\n"))
	out, err := runFile(t, path, f, "x")
	if err != nil {
		t.Fatalf("run: %v (output %q)", err, out)
	}
	if strings.TrimSpace(out) != "approved x" {
		t.Fatalf("output %q; want \"approved x\" from the opened script", out)
	}
	// Deleted outright: still the opened file.
	os.Remove(path)
	out, err = runFile(t, path, f)
	if err != nil || strings.TrimSpace(out) != "approved" {
		t.Fatalf("after delete: %q, %v; want the opened script to run", out, err)
	}
}

// argv[0] is the configured path, not /proc/self/fd/3.
func TestExecFileKeepsArgv0(t *testing.T) {
	sh := lookPath(t, "sh")
	f, err := os.Open(sh)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out, err := runFile(t, sh, f, "-c", `echo "$0"`)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(out) != sh {
		t.Fatalf("$0 = %q; want %q", out, sh)
	}
}

// A #! script run by descriptor sees its own name in $0 (version-manager
// shims dispatch on `${0##*/}`), still runs the opened file after a swap,
// and the temporary link directory is gone once the process is waited for.
func TestExecFileScriptNameAndCleanup(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "python3")
	f := openThenSwap(t, path, []byte("#!/bin/sh\necho \"approved ${0##*/} $(cat \"$0\" | wc -l)\"\n"))
	var out bytes.Buffer
	c := &Cmd{Path: path, ExecFile: f, Stdout: &out}
	p, err := Start(c)
	if err != nil {
		t.Fatal(err)
	}
	linkDir := c.execDir
	if linkDir == "" {
		t.Fatal("no link directory was made")
	}
	p.Wait()
	// Reading "$0" again also reads the opened file (2 lines), not the swap.
	if got := strings.TrimSpace(out.String()); got != "approved python3 2" {
		t.Fatalf("output %q; want \"approved python3 2\"", got)
	}
	if _, err := os.Stat(linkDir); !os.IsNotExist(err) {
		t.Errorf("the link directory %s is still there after Wait (%v)", linkDir, err)
	}
}

// BenchmarkStartByPath and BenchmarkStartByDescriptor: what executing the
// opened file (a temporary link directory, one more descriptor) adds to a
// spawn of a small program.
func BenchmarkStartByPath(b *testing.B) { benchStart(b, false) }

func BenchmarkStartByDescriptor(b *testing.B) { benchStart(b, true) }

func benchStart(b *testing.B, byFD bool) {
	path, err := exec.LookPath("true")
	if err != nil {
		b.Skip("no true")
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	for i := 0; i < b.N; i++ {
		c := &Cmd{Path: path}
		if byFD {
			c.ExecFile = f
		}
		p, err := Start(c)
		if err != nil {
			b.Fatal(err)
		}
		p.Wait()
	}
}

// A clawd killed before it waited for its programs leaves their link
// directories; the next start removes those of dead clawds, and nothing
// else: not a live clawd's, not a young one, not one holding something
// other than the link.
func TestSweepExecDirs(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	deadPid := strconv.Itoa(dead.Process.Pid)
	old := time.Now().Add(-2 * execDirMinAge)
	mk := func(name string, link bool, file bool, mtime time.Time) string {
		dir := filepath.Join(tmp, name)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if link {
			if err := os.Symlink("/proc/self/fd/3", filepath.Join(dir, "node")); err != nil {
				t.Fatal(err)
			}
		}
		if file {
			if err := os.WriteFile(filepath.Join(dir, "keep"), []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chtimes(dir, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	gone := mk(execDirPrefix+deadPid+"-123", true, false, old)
	goneEmpty := mk(execDirPrefix+deadPid+"-456", false, false, old)
	live := mk(execDirPrefix+strconv.Itoa(os.Getppid())+"-1", true, false, old)
	young := mk(execDirPrefix+deadPid+"-789", true, false, time.Now())
	foreign := mk(execDirPrefix+deadPid+"-999", true, true, old)
	other := mk("clawd-other-"+deadPid, true, false, old)
	n, err := SweepExecDirs()
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("removed %d, want 2", n)
	}
	for _, d := range []string{gone, goneEmpty} {
		if _, err := os.Lstat(d); !os.IsNotExist(err) {
			t.Errorf("%s left: %v", filepath.Base(d), err)
		}
	}
	for _, d := range []string{live, young, foreign, other} {
		if _, err := os.Lstat(d); err != nil {
			t.Errorf("%s removed: %v", filepath.Base(d), err)
		}
	}
}
