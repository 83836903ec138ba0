//go:build !linux

package upstream

import "errors"

// SweepOrphans needs /proc/PID/environ (Linux); elsewhere it reports that
// it cannot sweep.
func SweepOrphans(token string) ([]int, error) {
	if token == "" {
		return nil, nil
	}
	return nil, errors.New("finding orphaned upstream processes needs Linux's /proc")
}
