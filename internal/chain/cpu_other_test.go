//go:build !unix

package chain

import "time"

// processCPU is not measured here: CPU-time bounds pass.
func processCPU() time.Duration { return 0 }
