//go:build !linux

package upstream

import (
	"errors"
	"os"
)

// recordsUsed: nothing reads the record of running processes here
// (SweepRecorded needs /proc), so persistProcs does not write one: each
// daemon killed would leave its file behind.
const recordsUsed = false

// EndAdopted needs Linux (a child subreaper and /proc); elsewhere nothing
// is adopted.
func EndAdopted(pids []int, token string) []int { return nil }

// SweepRecorded needs /proc/PID/stat's start times (Linux); elsewhere the
// records are not acted on.
func SweepRecorded(dir string) ([]int, error) { return nil, nil }

// startAndSession knows neither where /proc is not there: a record
// without a start time is never acted on.
func startAndSession(pid int) (uint64, int, bool) { return 0, 0, false }

// openRecord is not used where records are not (recordsUsed).
func openRecord(path string) (*os.File, error) { return nil, errors.ErrUnsupported }
