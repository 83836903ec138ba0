package chain

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clawde/clawd/internal/support/fileutil"
	"github.com/clawde/clawd/internal/support/netguard"
	"github.com/clawde/clawd/internal/tools"
)

// supply is step 4: the provider's Origin decides, never the absence of a
// binary path.
//
//   - built-in (compiled into clawd): passes; its binary is clawd itself.
//   - local executable: its SHA-256 must be allowlisted for the provider's
//     id (cd_mcp_server_allowlist).
//   - remote server: its URL's origin (scheme, host, port) must be on the
//     egress allowlist (cd_egress_allowlist, `clawd egress allow`); else
//     refused (origin_not_allowlisted) with the line that allows it.
//     Nothing vets a remote server's code: the entry is the user's consent
//     to that origin, and which addresses it may reach is enforced where
//     the connection is made (internal/support/netguard).
//   - anything else, the zero Origin included: refused (unknown_origin).
//
// Before any of these, a tool whose definition is not approved (an
// upstream tool, new or changed: Unapproved) is refused.
//
// The hash is of the file at the path now; an upstream server's process may
// have been started from an earlier file. The upstream provider therefore
// also checks at spawn time, and this per-call check catches a binary
// replaced since (the next spawn would run it).
func (c *Chain) supply(e tools.Entry) *Decision {
	if e.Provider == nil {
		return deny(CodeSupplyChainDenied, StepSupply, "no_provider", nil)
	}
	// Whatever its origin, an upstream tool runs only as approved.
	if d := definition(e); d != nil {
		return d
	}
	return c.supplyOrigin(e)
}

// supplyOrigin is the supply-chain check of e's provider, the same for
// every tool it offers: its origin, and what is allowlisted for it.
func (c *Chain) supplyOrigin(e tools.Entry) *Decision {
	if e.Provider == nil {
		return deny(CodeSupplyChainDenied, StepSupply, "no_provider", nil)
	}
	switch o := e.Provider.Origin(); o.Kind {
	case tools.OriginBuiltin:
		return nil
	case tools.OriginLocal:
		if d := c.supplyLocal(e.Provider.ID(), o.Path); d != nil || o.Script == "" {
			return d
		}
		return c.supplyScript(e.Provider.ID(), o.Script)
	case tools.OriginRemote:
		return c.supplyRemote(e.Provider.ID(), o.URL)
	default:
		return deny(CodeSupplyChainDenied, StepSupply, "unknown_origin", map[string]any{
			"server": e.Provider.ID(), "origin": o.Kind.String(),
		})
	}
}

// Unapproved is a tool whose current definition the user has not approved:
// an upstream tool that is new, or changed since it was approved
// (docs/upstreams.md, "Tool definitions need approval"). The supply-chain
// step refuses it, so it is also missing from tools/list (Visible) and
// from /health's active tools.
type Unapproved interface {
	// DefinitionUnapproved returns the tool's upstream server, whether an
	// earlier definition was approved (this one is a change), and whether
	// the current one is unapproved.
	DefinitionUnapproved() (server string, changed, unapproved bool)
}

// definition refuses a tool whose definition is not approved.
func definition(e tools.Entry) *Decision {
	u, ok := e.Tool.(Unapproved)
	if !ok {
		return nil
	}
	server, changed, unapproved := u.DefinitionUnapproved()
	if !unapproved {
		return nil
	}
	reason := "definition_unapproved"
	if changed {
		reason = "definition_changed"
	}
	name := e.Tool.Spec().Name
	return deny(CodeSupplyChainDenied, StepSupply, reason, map[string]any{
		"server": server, "tool": name,
		"hint": "see it with clawd mcp diff " + server + "; if you trust it: clawd mcp approve " + server + " " + name,
	})
}

// supplyRemote checks a remote server's origin against the egress
// allowlist. The snapshot lookup is a map read after the generation check,
// like the trust registry's.
func (c *Chain) supplyRemote(server, rawURL string) *Decision {
	o, err := netguard.OriginOfURL(rawURL)
	if err != nil {
		// The refusal names what is wrong, not the URL: its path, query or
		// user information may hold the server's key, and the refusal
		// goes to the caller (`clawd mcp list` shows the URL masked).
		return deny(CodeSupplyChainDenied, StepSupply, "remote_origin_invalid", map[string]any{
			"server": server, "error": err.Error(),
		})
	}
	ok := false
	if c.Egress != nil {
		ok, err = c.Egress.EgressAllowed(o)
		if err != nil {
			c.logger().Error("supply chain: egress allowlist lookup failed", "server", server, "err", err)
			ok = false
		}
	}
	if !ok {
		return deny(CodeSupplyChainDenied, StepSupply, "origin_not_allowlisted", map[string]any{
			"server": server, "origin": o.String(),
			"hint": "if you trust this server: " + netguard.AllowCommand(o, false),
		})
	}
	return nil
}

// supplyLocal checks a local executable's SHA-256 against the allowlist.
func (c *Chain) supplyLocal(server, path string) *Decision {
	if path == "" {
		// A local origin must name its executable; an empty path is not
		// clawd itself.
		return deny(CodeSupplyChainDenied, StepSupply, "no_binary_path", map[string]any{"server": server})
	}
	sum, err := c.hashes.SumWithin(path, c.SupplyFreshFor)
	if err != nil {
		c.logger().Warn("supply chain: cannot hash the provider's binary", "server", server, "path", path, "err", err)
		return deny(CodeSupplyChainDenied, StepSupply, "binary_unreadable", map[string]any{
			"server": server, "path": path,
		})
	}
	ok := false
	if c.Allow != nil {
		ok, err = c.Allow.ServerAllowed(server, sum)
		if err != nil {
			c.logger().Error("supply chain: allowlist lookup failed", "server", server, "err", err)
			ok = false
		}
	}
	if !ok {
		return deny(CodeSupplyChainDenied, StepSupply, "binary_not_allowlisted", map[string]any{
			"server": server, "sha256": sum, "path": path,
			"hint": "if you trust this binary: clawd mcp allow --server " + server + " --sha256 " + sum,
		})
	}
	return nil
}

// supplyScript checks the script an interpreter runs (node x.js) against
// the server's script pins, the same way as its executable: the file at
// the path now, so a script changed since approval refuses every call
// (and the next spawn), even though the running process read it earlier.
func (c *Chain) supplyScript(server, path string) *Decision {
	sum, err := c.hashes.SumWithin(path, c.SupplyFreshFor)
	if err != nil {
		c.logger().Warn("supply chain: cannot hash the provider's script", "server", server, "path", path, "err", err)
		return deny(CodeSupplyChainDenied, StepSupply, "script_unreadable", map[string]any{
			"server": server, "path": path,
		})
	}
	ok := false
	if sa, isSA := c.Allow.(ScriptAllowlist); isSA {
		ok, err = sa.ScriptAllowed(server, sum)
		if err != nil {
			c.logger().Error("supply chain: script pin lookup failed", "server", server, "err", err)
			ok = false
		}
	}
	if !ok {
		return deny(CodeSupplyChainDenied, StepSupply, "script_not_allowlisted", map[string]any{
			"server": server, "script_sha256": sum, "path": path,
			"hint": "if you trust this script: clawd mcp allow " + server + " (it shows what it pins)",
		})
	}
	return nil
}

// HashCache computes files' SHA-256 once per file version. A version is
// identified by (device, inode, size, mtime, ctime): replacing the file
// (new inode), rewriting it (size, mtime, ctime) or even restoring its mtime
// with touch (ctime) gives a new key, so calls do not re-read the binary.
//
// Callers that miss the cache for the same file version at the same time
// share one read: N upstream servers started at once as `node SCRIPT`
// would otherwise each hash the ~100 MB node binary, seconds of CPU spent
// N times over while their connect timeouts run.
type HashCache struct {
	mu       sync.Mutex
	m        map[string]hashEntry
	inflight map[string]*hashCall
	looked   map[string]lookedAt // SumWithin's last successful look per path
	hashing  atomic.Int64        // files actually read, for tests and metrics
}

// lookedAt is a path's sum and the monotonic time its stat began.
type lookedAt struct {
	at  time.Time
	sum string
}

// hashCall is one read in progress; done is closed when sum and err are set.
type hashCall struct {
	id   fileID
	done chan struct{}
	sum  string
	err  error
}

type hashEntry struct {
	id  fileID
	sum string
}

// fileID identifies one version of a file (see HashCache).
type fileID struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64 // nanoseconds
	// changeTracked: ctime is the inode's change time, which no system call
	// sets back. Without it (Windows, some BSDs) mtime stands in, and a
	// same-size rewrite that restores the mtime keeps the key.
	changeTracked bool
}

// fileIDFor is fileIDOf; tests replace it to act as a system without an
// inode change time.
var fileIDFor = fileIDOf

// racyWindow: a file changed this recently is hashed but not cached, since
// a write in the same timestamp tick (Linux file times are coarse, ~4 ms)
// with the same size would leave its key unchanged (git's "racily clean").
// 2 s covers file systems with 1-2 s timestamps (HFS+, FAT). A variable only
// so tests need not sleep.
var racyWindow = 2 * time.Second

// maxHashEntries bounds the cache; past it the cache starts over.
const maxHashEntries = 1024

// Sum returns the lowercase hex SHA-256 of the regular file at path.
func (h *HashCache) Sum(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", path)
	}
	return h.shared(path, fileIDFor(fi), func() (string, error) { return h.read(path) })
}

// SumWithin is Sum, or the sum a successful Sum of path returned when its
// stat began less than within ago (within <= 0: Sum). The per-call
// supply-chain check uses it (Chain.SupplyFreshFor): two stats of long
// paths were a measurable part of a proxied call. A failed look is never
// reused.
func (h *HashCache) SumWithin(path string, within time.Duration) (string, error) {
	if within <= 0 {
		return h.Sum(path)
	}
	h.mu.Lock()
	l, ok := h.looked[path]
	h.mu.Unlock()
	if ok && time.Since(l.at) < within {
		return l.sum, nil
	}
	at := time.Now()
	sum, err := h.Sum(path)
	if err != nil {
		return "", err
	}
	h.mu.Lock()
	if old, ok := h.looked[path]; !ok || old.at.Before(at) {
		if h.looked == nil || len(h.looked) >= maxHashEntries {
			h.looked = map[string]lookedAt{}
		}
		h.looked[path] = lookedAt{at: at, sum: sum}
	}
	h.mu.Unlock()
	return sum, nil
}

// shared returns the cached sum of key's version id, or waits for a read
// of that version already in progress, or runs read: N servers started at
// once from one interpreter read it once, not N times.
func (h *HashCache) shared(key string, id fileID, read func() (string, error)) (string, error) {
	h.mu.Lock()
	if e, ok := h.m[key]; ok && e.id == id {
		h.mu.Unlock()
		return e.sum, nil
	}
	if c := h.inflight[key]; c != nil && c.id == id {
		h.mu.Unlock()
		<-c.done
		return c.sum, c.err
	}
	c := &hashCall{id: id, done: make(chan struct{})}
	if h.inflight == nil {
		h.inflight = map[string]*hashCall{}
	}
	h.inflight[key] = c
	h.mu.Unlock()
	c.sum, c.err = read()
	h.mu.Lock()
	if h.inflight[key] == c {
		delete(h.inflight, key)
	}
	h.mu.Unlock()
	close(c.done)
	return c.sum, c.err
}

// testHookRead, when set by a test, runs as a read starts.
var testHookRead func(path string)

// read hashes the file at path and caches the sum unless the file changed
// while it was read or too recently (racyWindow). fileutil.OpenNoWait: Sum
// saw a regular file, but one swapped for a FIFO since (a server's script
// in a workspace an agent can write to) would block a plain open until a
// writer came, and with it every tools/list, /health and call waiting on
// this read; hashOpen then refuses what is not a regular file.
func (h *HashCache) read(path string) (string, error) {
	f, err := fileutil.OpenNoWait(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return h.hashOpen(path, f)
}

// SumFile returns the SHA-256 of the open regular file f, read through the
// descriptor (never by its name, which may name another file by now), so
// the caller can check the very file it will go on to use, e.g. execute
// (proc.Cmd.ExecFile). The cache is shared with Sum and keyed by f.Name()
// and the descriptor's own identity (device, inode, size, times); reads
// use ReadAt, so f's offset does not move. Where the key lacks the inode
// change time (Windows), the file is always read: a spawn must not run a
// same-size replacement with its mtime set back under the approved hash.
// The fresh sum then updates the cache for Sum.
func (h *HashCache) SumFile(f *os.File) (string, error) {
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", f.Name())
	}
	id := fileIDFor(fi)
	if !id.changeTracked {
		return h.hashOpen(f.Name(), f)
	}
	return h.shared(f.Name(), id, func() (string, error) { return h.hashOpen(f.Name(), f) })
}

// hashOpen hashes f and caches the sum under key when the file did not
// change while it was read and is not racily new (see racyWindow).
func (h *HashCache) hashOpen(key string, f *os.File) (string, error) {
	before, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !before.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", key)
	}
	if testHookRead != nil {
		testHookRead(key)
	}
	h.hashing.Add(1)
	sh := sha256.New()
	if _, err := io.Copy(sh, io.NewSectionReader(f, 0, 1<<62)); err != nil {
		return "", err
	}
	sum := hex.EncodeToString(sh.Sum(nil))
	after, err := f.Stat()
	if err != nil {
		return "", err
	}
	bid := fileIDFor(before)
	if bid == fileIDFor(after) && time.Since(time.Unix(0, bid.ctime)) > racyWindow &&
		time.Since(time.Unix(0, bid.mtime)) > racyWindow {
		h.mu.Lock()
		if h.m == nil || len(h.m) >= maxHashEntries {
			h.m = map[string]hashEntry{}
		}
		h.m[key] = hashEntry{id: bid, sum: sum}
		h.mu.Unlock()
	}
	return sum, nil
}

// Hashed reports how many times a file was actually read and hashed.
func (h *HashCache) Hashed() int64 { return h.hashing.Load() }
