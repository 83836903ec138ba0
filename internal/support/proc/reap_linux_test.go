package proc

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// subreaper makes the test process a child subreaper for the test's
// duration. The test must not run in parallel with others that start
// children through os/exec (ReapAdopted would take their exit statuses).
func subreaper(t *testing.T) {
	t.Helper()
	if err := BecomeSubreaper(); err != nil {
		t.Skipf("cannot become a child subreaper: %v", err)
	}
	if !IsSubreaper() {
		t.Fatal("BecomeSubreaper succeeded but IsSubreaper says no")
	}
	t.Cleanup(func() {
		unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
		ReapAdopted()
	})
}

// An orphan of a child (sh starts sleep in the background and exits) is
// re-parented to the subreaper, listed as adopted, and reaped once it is
// ended, leaving no zombie; a child Start started is never listed nor
// reaped by ReapAdopted, even when it has exited and is not yet waited for:
// its Wait still gets its exit status.
func TestReapAdoptedSparesOurChildren(t *testing.T) {
	subreaper(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	setsid := lookPath(t, "setsid") // so the group kill of sh's Wait misses it
	// setsid -f forks, the forked one writes its own pid and becomes sleep:
	// an orphan in a session of its own once sh has exited.
	sh := start(t, &Cmd{Path: lookPath(t, "sh"), Args: []string{"-c", setsid + " -f sh -c 'echo $$ > " + pidFile + "; exec sleep 30' </dev/null >/dev/null 2>&1"}})
	// The pid is written after setsid: only then does sh's end (which
	// kills its group) spare it.
	orphan := 0
	deadline := time.Now().Add(10 * time.Second)
	for orphan == 0 {
		if b, err := os.ReadFile(pidFile); err == nil {
			orphan, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		if time.Now().After(deadline) {
			t.Fatal("no pid from sh")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if st, err := sh.Wait(); err != nil || !st.Success() {
		t.Fatalf("sh: %v %v", st, err)
	}
	t.Cleanup(func() { syscall.Kill(orphan, syscall.SIGKILL); ReapAdopted() })

	// Ours, exited, not waited for yet (on Linux it stays a zombie until
	// Wait).
	ours := start(t, &Cmd{Path: lookPath(t, "sh"), Args: []string{"-c", "exit 7"}})
	<-ours.Exited()

	living := ReapAdopted()
	if !slices.Contains(living, orphan) {
		st, err := ReadStat(orphan)
		t.Fatalf("adopted %v, want the orphan %d among them (children %v, its stat %+v %v, self %d)", living, orphan, children(), st, err, os.Getpid())
	}
	if st, err := ReadStat(orphan); err != nil || st.PPid != os.Getpid() {
		t.Fatalf("the orphan's parent: %+v %v, want the subreaper %d", st, err, os.Getpid())
	}
	if slices.Contains(living, ours.Pid()) {
		t.Fatalf("our own child %d was listed as adopted", ours.Pid())
	}
	st, err := ours.Wait()
	if st == nil || st.ExitCode() != 7 {
		t.Fatalf("our child's exit status was taken: %v %v", st, err)
	}

	syscall.Kill(orphan, syscall.SIGKILL)
	deadline = time.Now().Add(10 * time.Second)
	for {
		ReapAdopted()
		if _, err := os.Stat("/proc/" + strconv.Itoa(orphan)); os.IsNotExist(err) {
			break // reaped: not even a zombie is left
		}
		if time.Now().After(deadline) {
			st, _ := ReadStat(orphan)
			t.Fatalf("the ended orphan was not reaped: %+v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestParseStat(t *testing.T) {
	line := "4242 (a (weird) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10 18446744073709551615"
	st, err := parseStat(4242, line)
	if err != nil {
		t.Fatal(err)
	}
	if st.PPid != 1 || st.Pgid != 4242 || st.Sid != 4242 || st.State != 'S' || st.Start != 987654 {
		t.Errorf("%+v", st)
	}
	if _, err := parseStat(1, "1 (x) S 1"); err == nil {
		t.Error("a short stat parsed")
	}
	self, err := ReadStat(os.Getpid())
	if err != nil || self.Start == 0 || self.PPid != os.Getppid() {
		t.Errorf("own stat %+v %v", self, err)
	}
}

// BenchmarkReapAdopted is the cost of one adoption round (what the daemon
// spends every second and on every SIGCHLD) with no orphans to handle.
func BenchmarkReapAdopted(b *testing.B) {
	for b.Loop() {
		ReapAdopted()
	}
}
