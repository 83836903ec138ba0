//go:build !unix

package jsonrpc

import "time"

// processCPU is not measured here: CPU-time bounds pass.
func processCPU() time.Duration { return 0 }
