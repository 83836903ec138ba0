package tools

import "strconv"

// OriginKind says where a provider's tools run, which decides how the
// chain's supply-chain step vets them (internal/chain/supply.go).
type OriginKind uint8

const (
	// OriginUnknown is the zero value: a provider that does not say where
	// its tools come from is refused, never taken for built-in.
	OriginUnknown OriginKind = iota
	// OriginBuiltin: the tools are compiled into clawd (internal/builtin).
	OriginBuiltin
	// OriginLocal: the tools are served by a local executable (Origin.Path),
	// whose SHA-256 must be on the allowlist for the provider's id.
	OriginLocal
	// OriginRemote: the tools are served by a remote MCP server
	// (Origin.URL). Nothing vets a remote server's code: the chain runs its
	// tools only while the URL's origin is on the egress allowlist.
	OriginRemote
)

func (k OriginKind) String() string {
	switch k {
	case OriginBuiltin:
		return "builtin"
	case OriginLocal:
		return "local"
	case OriginRemote:
		return "remote"
	}
	return "unknown(" + strconv.Itoa(int(k)) + ")"
}

// Origin is where a provider's tools come from. It is set by the clawd code
// that builds the provider (from clawd's own configuration), never taken
// from what an upstream server says about itself.
type Origin struct {
	Kind OriginKind
	// Path is the executable of an OriginLocal provider.
	Path string
	// Script is, for an OriginLocal provider whose executable is an
	// interpreter (node x.js, python x.py), the script file it runs; its
	// SHA-256 must be pinned for the provider's id too. "" otherwise.
	Script string
	// URL is the endpoint of an OriginRemote provider.
	URL string
}

// BuiltinOrigin is the origin of tools compiled into clawd.
func BuiltinOrigin() Origin { return Origin{Kind: OriginBuiltin} }

// LocalOrigin is the origin of tools served by the executable at path.
func LocalOrigin(path string) Origin { return Origin{Kind: OriginLocal, Path: path} }

// RemoteOrigin is the origin of tools served by the MCP server at url.
func RemoteOrigin(url string) Origin { return Origin{Kind: OriginRemote, URL: url} }

// String is "builtin", "local:<path>", "remote:<url>" or "unknown(n)", for
// logs.
func (o Origin) String() string {
	switch o.Kind {
	case OriginLocal:
		return "local:" + o.Path
	case OriginRemote:
		return "remote:" + o.URL
	}
	return o.Kind.String()
}
