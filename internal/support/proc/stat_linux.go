package proc

import (
	"errors"
	"os"
	"strconv"
	"strings"
)

// Stat is what /proc/PID/stat says about a process that matters for
// finding clawd's processes again: its parent, group and session, its
// state, and its start time. The start time (clock ticks after boot) is
// what tells a process from a later one that got the same pid: a pid with
// another start time is another process.
type Stat struct {
	Pid, PPid, Pgid, Sid int
	State                byte   // R, S, D, Z (zombie), T, X...
	Start                uint64 // clock ticks after boot
}

// Exited reports whether the process has exited but is not reaped yet
// (a zombie, or dead and being reaped): its pid and start time still name
// it, but it runs no more.
func (s Stat) Exited() bool { return s.State == 'Z' || s.State == 'X' }

// ReadStat reads /proc/PID/stat.
func ReadStat(pid int) (Stat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Stat{}, err
	}
	return parseStat(pid, string(b))
}

// parseStat reads the fields after the command name, which is in
// parentheses and may itself contain spaces and parentheses: the last ')'
// ends it.
func parseStat(pid int, s string) (Stat, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return Stat{}, errors.New("proc: malformed stat of pid " + strconv.Itoa(pid))
	}
	f := strings.Fields(s[i+2:])
	// f[0] is field 3 (state); start time is field 22, f[19].
	if len(f) < 20 || len(f[0]) != 1 {
		return Stat{}, errors.New("proc: short stat of pid " + strconv.Itoa(pid))
	}
	st := Stat{Pid: pid, State: f[0][0]}
	var err error
	if st.PPid, err = strconv.Atoi(f[1]); err == nil {
		if st.Pgid, err = strconv.Atoi(f[2]); err == nil {
			if st.Sid, err = strconv.Atoi(f[3]); err == nil {
				st.Start, err = strconv.ParseUint(f[19], 10, 64)
			}
		}
	}
	if err != nil {
		return Stat{}, errors.New("proc: malformed stat of pid " + strconv.Itoa(pid) + ": " + err.Error())
	}
	return st, nil
}
