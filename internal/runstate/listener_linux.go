package runstate

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
)

// CheckListener returns an error unless every socket listening on TCP addr
// (a loopback IP:port; CheckLoopback), or on the wildcard address of its
// port, belongs to this process's effective uid, and there is one. The pid
// /health reports is only the answerer's word: another local user who
// binds the port while the daemon is stopped can claim any pid it saw in
// ps, and a pid a dead daemon left in its state file may have been reused.
// The kernel's record of the listener's owner (/proc/net/tcp, tcp6) is not
// theirs to choose. Called after the connection is made: a listener of
// another user that took it and then closed leaves it reset, unread.
func CheckListener(addr string) error {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return err
	}
	want := os.Geteuid()
	found, read := false, false
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		owners, err := listeners(table, ap)
		if err != nil {
			if os.IsNotExist(err) {
				continue // no IPv6, say
			}
			return fmt.Errorf("cannot tell who listens on %s: %v", addr, err)
		}
		read = true
		for _, uid := range owners {
			if uid != want {
				return fmt.Errorf("%s is held by uid %d, not by this user (uid %d); not sending anything there", addr, uid, want)
			}
			found = true
		}
	}
	if !read {
		return fmt.Errorf("cannot tell who listens on %s: /proc/net/tcp is not there (is /proc mounted?); not sending anything", addr)
	}
	if !found {
		return fmt.Errorf("no socket of this user (uid %d) listens on %s", want, addr)
	}
	return nil
}

// listeners returns the uids of the sockets in a /proc/net/tcp{,6} table
// that listen on ap's port at ap's address or the wildcard one.
func listeners(table string, ap netip.AddrPort) ([]int, error) {
	f, err := os.Open(table)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var uids []int
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid ...
		fields := strings.Fields(sc.Text())
		if len(fields) < 8 || fields[3] != "0A" { // TCP_LISTEN
			continue
		}
		local, ok := parseProcAddr(fields[1])
		if !ok || local.Port() != ap.Port() {
			continue
		}
		if a := local.Addr().Unmap(); a != ap.Addr().Unmap() && !a.IsUnspecified() {
			continue
		}
		uid, err := strconv.Atoi(fields[7])
		if err != nil {
			return nil, fmt.Errorf("%s: bad uid %q", table, fields[7])
		}
		uids = append(uids, uid)
	}
	return uids, sc.Err()
}

// parseProcAddr reads "0100007F:1CF6": the address as 32-bit words in the
// kernel's byte order, then the port in hex.
func parseProcAddr(s string) (netip.AddrPort, bool) {
	h, p, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, false
	}
	port, err := strconv.ParseUint(p, 16, 16)
	if err != nil {
		return netip.AddrPort{}, false
	}
	raw, err := hex.DecodeString(h)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, false
	}
	// Each word is the kernel's %08X of the address's bytes read as a
	// native-endian uint32: write it back the same way.
	b := make([]byte, len(raw))
	for i := 0; i < len(raw); i += 4 {
		w := binary.BigEndian.Uint32(raw[i:])
		binary.NativeEndian.PutUint32(b[i:], w)
	}
	a, _ := netip.AddrFromSlice(b)
	return netip.AddrPortFrom(a, uint16(port)), true
}
