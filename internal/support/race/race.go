// Package race tells whether the binary runs under the race detector, for
// tests that scale their time bounds or skip time comparisons under it, and
// for test harnesses that build what they drive with the detector too.
package race
