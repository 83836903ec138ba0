package daemon

import (
	"slices"
	"strconv"
)

// maxScanFD bounds the fallback that marks descriptors close-on-exec one by
// one when the system cannot list them (no /proc/self/fd, no /dev/fd):
// numbers from 3 up to min(soft RLIMIT_NOFILE, maxScanFD) are visited, one
// fcntl each. A descriptor inherited above that bound is left as it was;
// the bound keeps startup cheap where the limit is huge (macOS allows an
// unlimited hard limit, Linux up to 2^20 and more).
const maxScanFD = 1 << 16

// inheritedFromListing returns, sorted, the descriptors above stderr that a
// listing of /proc/self/fd or /dev/fd names. Names that are not descriptor
// numbers ("." and ".." on some systems) are skipped, and so are 0, 1 and
// 2: stdin, stdout and stderr are the stdio transport's and bash's own.
func inheritedFromListing(names []string) []int {
	var fds []int
	for _, n := range names {
		fd, err := strconv.Atoi(n)
		if err != nil || fd <= 2 || strconv.Itoa(fd) != n {
			continue
		}
		fds = append(fds, fd)
	}
	slices.Sort(fds)
	return slices.Compact(fds)
}

// scanLimit is one past the highest descriptor the fallback scan visits,
// given the soft RLIMIT_NOFILE (a process cannot hold a descriptor at or
// above its soft limit unless it lowered the limit after opening it).
func scanLimit(soft uint64) int {
	if soft > maxScanFD {
		return maxScanFD
	}
	return int(soft)
}
