package proc

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Adopting orphans (Linux). A process that dies leaves its children to the
// nearest ancestor marked as a child subreaper, or to init. clawd marks
// itself (BecomeSubreaper) so that what its stdio upstreams leave behind
// (a daemon that double-forked, a grandchild whose parent was killed)
// becomes clawd's child: it can be found (Adopted) and ended, and is reaped
// when it exits instead of lingering as a zombie of init's.
//
// Reaping must never take the exit status of a child clawd itself is
// waiting for (Start's children are reaped by Wait, through os/exec): so
// the pids Start started are tracked until Wait reaped them, Start holds
// startMu (shared) from fork until its pid is tracked, and the adoption
// scan holds it exclusively, so a child that exits the instant it was
// forked is never mistaken for an orphan. Every child clawd starts goes
// through Start; a program embedding this package that starts children
// another way must not use ReapAdopted.

var (
	startMu sync.RWMutex
	mineMu  sync.Mutex
	mine    = map[int]bool{}
)

func startLock()   { startMu.RLock() }
func startUnlock() { startMu.RUnlock() }

func track(pid int) {
	mineMu.Lock()
	mine[pid] = true
	mineMu.Unlock()
}

// untrack runs after Wait reaped pid.
func untrack(pid int) {
	mineMu.Lock()
	delete(mine, pid)
	mineMu.Unlock()
}

// BecomeSubreaper marks this process a child subreaper
// (PR_SET_CHILD_SUBREAPER): orphans among its descendants are re-parented
// to it instead of init. It lasts for the process's life and is not
// inherited by children.
func BecomeSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// IsSubreaper reports whether this process is a child subreaper.
func IsSubreaper() bool {
	var v int32
	err := unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&v)), 0, 0, 0)
	return err == nil && v != 0
}

// children lists this process's children: every thread's
// /proc/self/task/TID/children (a child belongs to the thread that forked
// it, an adopted one to a thread of the subreaper), or, on a kernel without
// those files, a scan of every process's parent.
func children() []int {
	tasks, err := os.ReadDir("/proc/self/task")
	var out []int
	seen := map[int]bool{}
	ok := err == nil
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + t.Name() + "/children")
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				// The thread ended meanwhile, or the kernel lacks the
				// file; the latter makes the scan below necessary.
				if _, serr := os.Stat("/proc/self/task/" + t.Name()); serr == nil {
					ok = false
					break
				}
			}
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil && !seen[pid] {
				seen[pid] = true
				out = append(out, pid)
			}
		}
	}
	if ok {
		return out
	}
	out = out[:0]
	self := os.Getpid()
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := ReadStat(pid); err == nil && st.PPid == self {
			out = append(out, pid)
		}
	}
	return out
}

// ReapAdopted reaps every child of this process that Start did not start
// and that has exited, and returns the living ones: on a subreaper, the
// orphans it adopted. Their exit statuses belong to no one in clawd and are
// discarded.
func ReapAdopted() (living []int) {
	startMu.Lock()
	defer startMu.Unlock()
	for _, pid := range children() {
		mineMu.Lock()
		ours := mine[pid]
		mineMu.Unlock()
		if ours {
			continue
		}
		st, err := ReadStat(pid)
		if err != nil {
			continue // gone already
		}
		if st.Exited() {
			var ws unix.WaitStatus
			for {
				_, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil)
				if !errors.Is(err, syscall.EINTR) {
					break
				}
			}
			continue
		}
		living = append(living, pid)
	}
	return living
}

var rescan = make(chan struct{}, 1)

// Rescan asks WatchAdopted for a round now (a caller knows that what it
// keeps has changed: a server whose orphans may now be ended has exited).
func Rescan() {
	select {
	case rescan <- struct{}{}:
	default:
	}
}

// WatchAdopted reaps adopted orphans until ctx ends: after every SIGCHLD,
// every Rescan and at least every period, it calls ReapAdopted and hands the living
// adopted children to onAdopted (if not nil), which decides which of them
// to end (ending one makes it exit, and the next round reaps it). A
// process is adopted without a signal to its new parent, so the period
// bounds how long a living orphan goes unnoticed.
func WatchAdopted(ctx context.Context, period time.Duration, onAdopted func([]int)) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGCHLD)
	defer signal.Stop(sig)
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		if living := ReapAdopted(); len(living) > 0 && onAdopted != nil {
			onAdopted(living)
		}
		select {
		case <-ctx.Done():
			return
		case <-sig:
		case <-rescan:
		case <-t.C:
		}
	}
}
