package proc

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawde/clawd/test/clawdtest"
)

// The child holds descriptors 0, 1 and 2 and nothing of clawd's: not the
// pipes of another child running at the same time, not files clawd has
// open. (Descriptors the test process itself inherited without
// close-on-exec pass through, as with any exec; clawd serve marks those
// close-on-exec at startup. The expected set includes them.)
func TestChildHasOnlyStdio(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc")
	}
	// Another child with all three pipes, alive during the check, and a
	// file of ours.
	other := start(t, &Cmd{Path: lookPath(t, "cat"), StdinPipe: true, StdoutPipe: true, Stderr: NewRing(16)})
	defer other.Stdout().Close()
	f, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	want := clawdtest.ExpectedChildFDs(t)
	p := start(t, &Cmd{Path: lookPath(t, "sleep"), Args: []string{"30"}, StdinPipe: true, Stdout: NewRing(16), Stderr: NewRing(16)})
	self, _ := os.Readlink("/proc/self/exe")
	dir := "/proc/" + strconv.Itoa(p.Pid())
	deadline := time.Now().Add(10 * time.Second)
	for { // until the child has exec'd sleep; before, it is a fork of us
		if exe, err := os.Readlink(dir + "/exe"); err == nil && exe != self {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the child did not exec")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// sleep opens and closes files while it starts (locale data), so the
	// set is read until it settles: a leaked descriptor never goes away,
	// sleep does not close what it inherited.
	var got []string
	for {
		ents, err := os.ReadDir(dir + "/fd")
		if err != nil {
			t.Fatal(err)
		}
		got = got[:0]
		for _, e := range ents {
			got = append(got, e.Name())
		}
		clawdtest.SortFDs(got)
		if slices.Equal(got, want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !slices.Equal(got, want) {
		t.Errorf("the child has descriptors %v, want %v", got, want)
	}
	// And stdin is the pipe asked for, stdout and stderr pipes.
	for _, fd := range []string{"0", "1", "2"} {
		if l, _ := os.Readlink(dir + "/fd/" + fd); !strings.HasPrefix(l, "pipe:") {
			t.Errorf("fd %s is %q, want a pipe", fd, l)
		}
	}
}

func TestStdinNullDevice(t *testing.T) {
	var out syncBuf
	p := start(t, &Cmd{Path: lookPath(t, "readlink"), Args: []string{"/proc/self/fd/0"}, Stdout: &out})
	p.Wait()
	if out.String() != "/dev/null\n" {
		t.Errorf("stdin is %q, want /dev/null", out.String())
	}
}

// ParentDeathKill: when the process that started a child is killed with
// SIGKILL (no cleanup runs), the child with the option dies too; one
// without it lives on (that is what the option is for).
func TestParentDeathKill(t *testing.T) {
	if os.Getenv("PROC_PDEATH_HELPER") == "1" {
		sleep, err := exec.LookPath("sleep")
		if err != nil {
			os.Exit(2)
		}
		with, err1 := Start(&Cmd{Path: sleep, Args: []string{"1000"}, ParentDeathKill: true})
		without, err2 := Start(&Cmd{Path: sleep, Args: []string{"1000"}})
		if err1 != nil || err2 != nil {
			os.Exit(3)
		}
		fmt.Printf("%d %d\n", with.Pid(), without.Pid())
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestParentDeathKill$")
	cmd.Env = append(os.Environ(), "PROC_PDEATH_HELPER=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var with, without int
	if _, err := fmt.Fscan(out, &with, &without); err != nil {
		cmd.Process.Kill()
		t.Fatalf("reading the helper's pids: %v", err)
	}
	defer syscall.Kill(without, syscall.SIGKILL)
	defer syscall.Kill(with, syscall.SIGKILL)
	cmd.Process.Kill()
	cmd.Wait()
	waitGone(t, with)
	if syscall.Kill(without, 0) != nil || isZombie(without) {
		t.Error("the child without ParentDeathKill died too: the test proves nothing")
	}
}
