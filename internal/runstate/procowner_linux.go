package runstate

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// ownProcess reports whether pid's effective uid is this process's, by the
// "Uid:" line of /proc/PID/status (real, effective, saved, filesystem).
// Without /proc the signal's answer stands.
func ownProcess(pid int) bool {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return !os.IsNotExist(err) || !procMounted()
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "Uid:"); ok {
			ids := strings.Fields(rest)
			return len(ids) >= 2 && ids[1] == strconv.Itoa(os.Geteuid())
		}
	}
	return true
}

func procMounted() bool {
	_, err := os.Stat("/proc/self/status")
	return err == nil
}
