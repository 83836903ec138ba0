// Package cputime reads the CPU time the process, or one of its threads,
// has used. Tests hold work to it rather than to wall time: a bound on CPU
// time is not missed because the machine is loaded, where one on wall time
// is.
package cputime
