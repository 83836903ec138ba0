package upstream

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// SweepOrphans kills every process of this user that carries
// OwnerEnv=token in its environment: what stdio upstreams (and anything
// they started, which inherits the variable) of an earlier clawd with this
// token left behind when that clawd was killed without cleanup. The daemon
// calls it at start, before Apply, with the token it persisted; it returns
// the pids it killed.
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
	mark := []byte(OwnerEnv + "=" + token)
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
			if bytes.Equal(kv, mark) {
				if syscall.Kill(pid, syscall.SIGKILL) == nil {
					killed = append(killed, pid)
				}
				break
			}
		}
	}
	return killed, nil
}
