package proc

import (
	"errors"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// killSession sends SIGKILL to every living process of the session sid
// (Cmd.NewSession): what left the child's process group (setpgid, `set -m`
// job control) but not its session. The caller guarantees that sid is the
// session of its own child, not yet reaped: while the leader is an
// unreaped zombie or alive, its pid, hence the session id, names no other
// session. Each process is checked and signalled through a pidfd, so a
// member whose pid is reused between the check and the signal is never
// mistaken for another process. A member may fork while this runs; the
// scan is repeated until a round finds no member it has not signalled
// already (a process with SIGKILL pending forks no more, so a child that
// a round missed is found by the next), at most a bounded number of times.
func killSession(sid int) {
	signalled := map[int]uint64{} // pid: start time
	for round := 0; round < 16; round++ {
		d, err := os.Open("/proc")
		if err != nil {
			return
		}
		names, _ := d.Readdirnames(-1)
		d.Close()
		found := false
		for _, name := range names {
			pid, err := strconv.Atoi(name)
			if err != nil || pid <= 1 {
				continue
			}
			st, err := ReadStat(pid)
			if err != nil || st.Sid != sid || st.Exited() {
				continue
			}
			if start, ok := signalled[pid]; ok && start == st.Start {
				continue // dying already
			}
			signalled[pid] = st.Start
			found = true
			fd, err := unix.PidfdOpen(pid, 0)
			if err != nil {
				if !errors.Is(err, unix.ESRCH) {
					// No pidfd (Linux before 5.3): the check above and
					// this kill follow each other.
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
				continue
			}
			if st, err := ReadStat(pid); err == nil && st.Sid == sid {
				_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
			}
			unix.Close(fd)
		}
		if !found {
			return
		}
	}
}
