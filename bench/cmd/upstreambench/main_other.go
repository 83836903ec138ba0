//go:build !unix

// Command upstreambench needs a unix system (process groups, SIGSTOP,
// /proc); see main.go.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "upstreambench: runs on Linux (and other unix systems) only")
	os.Exit(2)
}
