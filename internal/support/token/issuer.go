package token

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clawde/clawd/internal/support/fileutil"
)

// Defaults of the token lifetime: 24 h, renewed an hour before it ends.
const (
	DefaultTTL = 24 * time.Hour
	// DefaultRenewBefore is how long before expiry a new token is issued.
	// The previous token stays valid until its own expiry, so a client that
	// read the file shortly before the renewal keeps working for this long.
	DefaultRenewBefore = time.Hour
)

// Options configure an Issuer.
type Options struct {
	Secret      []byte // HMAC key (never logged, never written by the issuer)
	WorkspaceID string
	PID         int
	Boot        time.Time // the daemon's start time
	Path        string    // token file
	TTL         time.Duration
	RenewBefore time.Duration
	Now         func() time.Time // tests move the clock; default time.Now
	Logger      *slog.Logger
}

// Issuer owns the workspace token of one running daemon. Check is safe for
// concurrent use and costs one atomic load and a constant-time compare.
type Issuer struct {
	opts Options

	mu      sync.Mutex // serializes issuing
	counter uint64
	gen     atomic.Pointer[generation]
}

// generation is an immutable snapshot of the accepted tokens.
type generation struct {
	counter uint64
	tok     []byte // current token (hex text)
	exp     time.Time
	renewAt time.Time
	prev    []byte // the token the last renewal replaced; nil after a rotation
	prevExp time.Time
}

// NewIssuer issues the first token and writes it to the token file. The
// file's directory is created (0700) if missing.
func NewIssuer(o Options) (*Issuer, error) {
	if len(o.Secret) == 0 {
		return nil, errors.New("token: empty secret")
	}
	if o.Path == "" {
		return nil, errors.New("token: no token file path")
	}
	if o.TTL <= 0 {
		o.TTL = DefaultTTL
	}
	if o.RenewBefore <= 0 || o.RenewBefore >= o.TTL {
		o.RenewBefore = min(DefaultRenewBefore, o.TTL/2)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if err := fileutil.MkdirPrivate(filepath.Dir(o.Path)); err != nil {
		return nil, fmt.Errorf("token file directory: %w", err)
	}
	i := &Issuer{opts: o}
	i.mu.Lock()
	defer i.mu.Unlock()
	if err := i.issueLocked(false); err != nil {
		return nil, err
	}
	return i, nil
}

// Path is the token file.
func (i *Issuer) Path() string { return i.opts.Path }

// Expires is when the current token expires (it is renewed before).
func (i *Issuer) Expires() time.Time { return i.gen.Load().exp }

// RenewAt is when the current token will be replaced by a renewal.
func (i *Issuer) RenewAt() time.Time { return i.gen.Load().renewAt }

// Check reports whether presented is an accepted token: the current one, or
// the one the last renewal replaced while it has not expired. A token past
// its renewal time triggers the renewal first (the timer may be late after
// the machine slept).
func (i *Issuer) Check(presented string) bool {
	now := i.now()
	g := i.gen.Load()
	if !now.Before(g.renewAt) {
		i.renewIfDue()
		g = i.gen.Load()
	}
	p := []byte(presented)
	ok := now.Before(g.exp) && subtle.ConstantTimeCompare(p, g.tok) == 1
	if g.prev != nil && now.Before(g.prevExp) && subtle.ConstantTimeCompare(p, g.prev) == 1 {
		ok = true
	}
	return ok
}

// Rotate issues a new token and stops accepting every earlier one at once
// (`clawd token rotate`). The new token is written to the file before it is
// accepted, so a client that reads the file never holds a token the daemon
// does not know yet for longer than the swap takes; on a write error nothing
// changes and the old token stays valid.
func (i *Issuer) Rotate() error {
	i.mu.Lock()
	defer i.mu.Unlock()
	if err := i.issueLocked(false); err != nil {
		return err
	}
	i.opts.Logger.Info("workspace token rotated; earlier tokens are rejected", "token_file", i.opts.Path, "expires", i.gen.Load().exp.Format(time.RFC3339))
	return nil
}

// RenewIfDue issues a new token when the current one reached its renewal
// time, keeping the current one valid until it expires. It reports the
// time of the next renewal.
func (i *Issuer) RenewIfDue() time.Time {
	i.renewIfDue()
	return i.gen.Load().renewAt
}

func (i *Issuer) renewIfDue() {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.now().Before(i.gen.Load().renewAt) {
		return // renewed by another goroutine meanwhile
	}
	if err := i.issueLocked(true); err != nil {
		// Keep serving the current token until it expires; the next check
		// retries. The error never carries the token.
		i.opts.Logger.Error("workspace token renewal failed", "token_file", i.opts.Path, "err", err)
		return
	}
	i.opts.Logger.Info("workspace token renewed", "token_file", i.opts.Path, "expires", i.gen.Load().exp.Format(time.RFC3339))
}

// issueLocked computes the next token, writes it and publishes it. keepPrev
// (a renewal) keeps the current token valid until its expiry.
func (i *Issuer) issueLocked(keepPrev bool) error {
	now := i.now()
	counter := i.counter + 1
	tok := i.compute(counter)
	if err := fileutil.WriteAtomic(i.opts.Path, tok, 0o600); err != nil {
		return fmt.Errorf("writing the token file %s: %w", i.opts.Path, err)
	}
	g := &generation{
		counter: counter,
		tok:     tok,
		exp:     now.Add(i.opts.TTL),
		renewAt: now.Add(i.opts.TTL - i.opts.RenewBefore),
	}
	if old := i.gen.Load(); keepPrev && old != nil && now.Before(old.exp) {
		g.prev, g.prevExp = old.tok, old.exp
	}
	i.counter = counter
	i.gen.Store(g)
	return nil
}

// compute is HMAC-SHA256(secret, workspace id || pid || boot time ||
// counter), each field length-prefixed so no two inputs share an encoding,
// as lowercase hex.
func (i *Issuer) compute(counter uint64) []byte {
	m := hmac.New(sha256.New, i.opts.Secret)
	field := func(b []byte) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(b)))
		m.Write(n[:])
		m.Write(b)
	}
	u64 := func(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }
	field([]byte("clawd-workspace-token-v1"))
	field([]byte(i.opts.WorkspaceID))
	field(u64(uint64(i.opts.PID)))
	field(u64(uint64(i.opts.Boot.UnixNano())))
	field(u64(counter))
	sum := m.Sum(nil)
	out := make([]byte, hex.EncodedLen(len(sum)))
	hex.Encode(out, sum)
	return out
}

// Remove deletes the token file if it still holds this daemon's current
// token (a token lives 24 h or until clawd exits); a file that
// another daemon has since written is left alone.
func (i *Issuer) Remove() error {
	i.mu.Lock()
	defer i.mu.Unlock()
	data, err := os.ReadFile(i.opts.Path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	if subtle.ConstantTimeCompare([]byte(strings.TrimSpace(string(data))), i.gen.Load().tok) != 1 {
		return nil
	}
	return os.Remove(i.opts.Path)
}

// now is the wall clock without its monotonic reading, so expiry follows
// real time even across a suspend (monotonic clocks stop while asleep).
func (i *Issuer) now() time.Time { return i.opts.Now().Round(0) }

// ReadFile reads a token file written by a daemon, trimming whitespace.
func ReadFile(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	tok := strings.TrimSpace(string(data))
	if tok == "" {
		return "", fmt.Errorf("token file %s is empty", path)
	}
	return tok, nil
}

// Run renews the token before it expires until ctx ends. It wakes every
// minute rather than once at the renewal time, because timers follow the
// monotonic clock, which stops while the machine sleeps.
func (i *Issuer) Run(ctx context.Context) {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if !i.now().Before(i.gen.Load().renewAt) {
				i.renewIfDue()
			}
		}
	}
}
