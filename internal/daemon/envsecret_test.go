//go:build unix

package daemon

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRestoreEnvOnlyFromPipe: the descriptor variable is honoured only for
// a pipe above stderr, so a value set by hand cannot make clawd serve read
// its stdin (the MCP stream) or a file as environment.
func TestRestoreEnvOnlyFromPipe(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "env")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString("CLAWD_X=from-a-file")
	for _, v := range []string{"0", "2", "-1", "x", strconv.Itoa(int(f.Fd()))} {
		t.Setenv(envFDVar, v)
		err := HideEnvSecrets()
		if err == nil || !strings.Contains(err.Error(), envFDVar) {
			t.Errorf("%s=%s: %v, want a refusal naming the variable", envFDVar, v, err)
		}
		if _, set := os.LookupEnv(envFDVar); set {
			t.Errorf("%s still set after the attempt", envFDVar)
		}
	}
	if os.Getenv("CLAWD_X") != "" {
		t.Error("a file was read as environment")
	}

	// A pipe holding the variables restores them into Go's environment.
	// Raw descriptors: HideEnvSecrets closes the read end itself.
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil {
		t.Fatal(err)
	}
	syscall.Write(p[1], []byte("CLAWD_TOKEN=tok\x00CLAWDE_SESSION_SECRET=s=with=equals\x00PATH=/evil"))
	syscall.Close(p[1])
	t.Setenv("CLAWD_TOKEN", "")
	t.Setenv("CLAWDE_SESSION_SECRET", "")
	t.Setenv(envFDVar, strconv.Itoa(p[0]))
	if err := HideEnvSecrets(); err != nil {
		t.Fatal(err)
	}
	if os.Getenv("CLAWD_TOKEN") != "tok" || os.Getenv("CLAWDE_SESSION_SECRET") != "s=with=equals" {
		t.Errorf("restored %q %q", os.Getenv("CLAWD_TOKEN"), os.Getenv("CLAWDE_SESSION_SECRET"))
	}
	if os.Getenv("PATH") == "/evil" {
		t.Error("a variable that is not clawd's was taken from the pipe")
	}
}

// TestRestoreEnvRefusesAnOpenPipe: the pipe clawd passes itself holds the
// whole payload and its write end is closed before the exec, so all of it
// and the end of file can be read at once. A pipe some other process
// still writes to (the variable copied into a host's config, with a pipe
// it inherits at that number) is refused, not read until its writer ends:
// clawd serve hung there before it said a word.
func TestRestoreEnvRefusesAnOpenPipe(t *testing.T) {
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(p[1])
	syscall.Write(p[1], []byte("CLAWD_TOKEN=partial"))
	t.Setenv("CLAWD_TOKEN", "")
	t.Setenv(envFDVar, strconv.Itoa(p[0]))
	done := make(chan error, 1)
	go func() { done <- HideEnvSecrets() }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), envFDVar) {
			t.Errorf("a pipe whose writer is open: %v, want a refusal naming %s", err, envFDVar)
		}
	case <-time.After(30 * time.Second):
		syscall.Close(p[1]) // let the read end
		<-done
		t.Fatal("HideEnvSecrets still read a pipe whose writer is open after 30 s")
	}
	if os.Getenv("CLAWD_TOKEN") != "" {
		t.Error("a variable was taken from a pipe that is not clawd's")
	}
}
