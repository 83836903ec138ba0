package upstream

import (
	"bytes"
	"os"
	"strconv"
	"syscall"

	"github.com/clawde/clawd/internal/support/proc"
)

// SweepOrphans kills every process of this user whose environment marks
// it as started under a clawd with this token that no longer runs
// (OwnerEnv, orphaned): what stdio upstreams (and anything they started,
// which inherits the variable) of an earlier clawd left behind when it was
// killed without cleanup. Processes of a live clawd of the same workspace
// are left alone. The daemon calls it at start, before Apply, with the
// token it persisted; it returns the pids it killed. Limit: if the dead
// clawd's pid has been reused by a live process, its orphans are kept
// until a later sweep.
//
// Limits: a process that cleared or rewrote its environment (env -i, a
// setuid program) is not found; /proc/PID/environ is the environment at
// exec, so a process that set the variable later would not be found either,
// and one that unset it later still is. Processes of other users cannot be
// read and are not touched.
func SweepOrphans(token string) ([]int, error) {
	if token == "" {
		return nil, nil
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	prefix := []byte(OwnerEnv + "=")
	alive := func(pid int) bool {
		if err := syscall.Kill(pid, 0); err != nil && err != syscall.EPERM {
			return false
		}
		// A killed clawd that its parent has not reaped yet is a zombie:
		// signal 0 still finds it, but it has exited.
		st, err := proc.ReadStat(pid)
		return err != nil || !st.Exited()
	}
	self := os.Getpid()
	var killed []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(b, []byte{0}) {
			if v, ok := bytes.CutPrefix(kv, prefix); ok && orphaned(string(v), token, self, alive) {
				if syscall.Kill(pid, syscall.SIGKILL) == nil {
					killed = append(killed, pid)
				}
				break
			}
		}
	}
	return killed, nil
}
