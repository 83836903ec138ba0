package clawdtest

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// ExpectedChildFDs is the descriptor set a child clawd starts should have
// (Linux: it reads /proc), sorted numerically: 0, 1, 2, plus every descriptor the test
// process itself holds without close-on-exec (those pass through any exec,
// clawd's or not). It skips the test when /proc is not mounted.
func ExpectedChildFDs(t testing.TB) []string {
	want := []string{"0", "1", "2"}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc")
	}
	for _, e := range ents {
		n, _ := strconv.Atoi(e.Name())
		info, err := os.ReadFile("/proc/self/fdinfo/" + e.Name())
		if n < 3 || err != nil {
			continue
		}
		for _, line := range strings.Split(string(info), "\n") {
			if v, ok := strings.CutPrefix(line, "flags:"); ok {
				flags, _ := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
				if flags&syscall.O_CLOEXEC == 0 {
					want = append(want, e.Name())
				}
			}
		}
	}
	SortFDs(want)
	return want
}

// SortFDs sorts descriptor numbers given as strings numerically.
func SortFDs(fds []string) {
	slices.SortFunc(fds, func(a, b string) int { x, _ := strconv.Atoi(a); y, _ := strconv.Atoi(b); return x - y })
}
