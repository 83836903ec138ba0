// Package cputime reads the CPU time the process has used. Tests hold work
// to it rather than to wall time: a bound on CPU time is not missed because
// the machine is loaded, where one on wall time is.
package cputime
