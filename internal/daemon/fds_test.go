package daemon

import (
	"slices"
	"testing"
)

// The descriptors marked close-on-exec after listing /proc/self/fd or
// /dev/fd: everything above stderr, nothing else, whatever else the listing
// holds.
func TestInheritedFromListing(t *testing.T) {
	for _, tc := range []struct {
		name  string
		names []string
		want  []int
	}{
		{"empty", nil, nil},
		{"only stdio", []string{"0", "1", "2"}, nil},
		{"inherited above stderr", []string{"0", "1", "2", "3", "7", "42"}, []int{3, 7, 42}},
		{"dot entries of a /dev/fd listing", []string{".", "..", "0", "1", "2", "5"}, []int{5}},
		{"unsorted, as readdir gives them", []string{"10", "2", "4", "3"}, []int{3, 4, 10}},
		{"not numbers", []string{"fd", "-3", "+4", "04", " 5", "6x"}, nil},
		{"duplicates", []string{"9", "9"}, []int{9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := inheritedFromListing(tc.names); !slices.Equal(got, tc.want) {
				t.Fatalf("inheritedFromListing(%q) = %v, want %v", tc.names, got, tc.want)
			}
		})
	}
}

// The fallback scan when no listing is possible visits up to the soft
// limit, never more than maxScanFD.
func TestScanLimit(t *testing.T) {
	for _, tc := range []struct {
		soft uint64
		want int
	}{
		{0, 0},
		{256, 256},   // macOS's default soft limit
		{1024, 1024}, // Linux's
		{maxScanFD, maxScanFD},
		{maxScanFD + 1, maxScanFD},
		{^uint64(0), maxScanFD}, // RLIM_INFINITY
	} {
		if got := scanLimit(tc.soft); got != tc.want {
			t.Errorf("scanLimit(%d) = %d, want %d", tc.soft, got, tc.want)
		}
	}
}
