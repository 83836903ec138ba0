//go:build !darwin && !windows

package sandbox

// foldCase: Linux and BSD file systems compare names byte for byte.
const foldCase = false
