//go:build !linux

package main

// clearParentDeathSignal: there is no parent-death signal outside Linux.
func clearParentDeathSignal() {}
