//go:build linux || darwin

package peercred

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
)

// Dial hands back a connection to this user's own socket, and refuses one
// whose listener runs as anyone else (played here by changing the uid Dial
// expects) before writing a byte.
func TestDialChecksTheListenersUID(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan int, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n, _ := c.Read(make([]byte, 16))
			got <- n
			c.Close()
		}
	}()
	c, err := Dial(context.Background(), path)
	if err != nil {
		t.Fatalf("Dial of our own socket: %v", err)
	}
	c.Close()
	if n := <-got; n != 0 {
		t.Fatalf("Dial wrote %d bytes", n)
	}

	euid = func() int { return os.Geteuid() + 1 }
	defer func() { euid = os.Geteuid }()
	_, err = Dial(context.Background(), path)
	var other *OtherUserError
	if !errors.As(err, &other) || other.UID != os.Geteuid() || other.PID != os.Getpid() {
		t.Fatalf("Dial of a socket of another uid: %v, want an OtherUserError naming uid %d and pid %d", err, os.Geteuid(), os.Getpid())
	}
	if n := <-got; n != 0 {
		t.Fatalf("Dial wrote %d bytes to another user's socket", n)
	}
}
