// Package cputime reads the CPU time the process, or one of its threads,
// has used. Tests hold work to it rather than to wall time: a bound on CPU
// time is not missed because the machine is loaded, where one on wall time
// is.
package cputime

import (
	"runtime"
	"time"
)

// Least is the least time of runs runs of f, each measured on the CPU
// clock of the thread it runs on (Thread, with the goroutine held to its
// thread), so that neither other processes of a loaded machine nor other
// goroutines of the process (tests in parallel, the collector's workers)
// count; where that clock is not read, by the wall clock. Taking the least
// keeps one collection or page-fault storm from deciding. Work f hands to
// other goroutines is not counted.
func Least(runs int, f func()) time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	least := time.Duration(1<<63 - 1)
	for range runs {
		start := time.Now()
		cpu, onThread := Thread()
		f()
		if end, ok := Thread(); onThread && ok {
			least = min(least, end-cpu)
		} else {
			least = min(least, time.Since(start))
		}
	}
	return least
}
