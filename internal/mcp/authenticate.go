package mcp

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/jsonrpc"
)

// MethodAuthenticate is clawd's own request for presenting a per-client
// credential on a connection whose transport proves only the user (the unix
// socket): {"credential": "cdc1_..."} before initialize. Success answers
// {"kind": K, "credential_id": ID} and binds the session to that kind; a
// refused credential is answered with -32001 and changes nothing. It may
// succeed once per session. docs/transports.md describes it.
const MethodAuthenticate = "clawd/authenticate"

func (s *Session) authenticate(params jsontext.Value) (jsontext.Value, *jsonrpc.Error) {
	if s.opts.Authenticate == nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound,
			"method not found: "+MethodAuthenticate+" (this transport takes its credential elsewhere: stdio's --client, HTTP's Authorization header)")
	}
	var p struct {
		Credential string `json:"credential"`
	}
	if err := json.Unmarshal(orEmpty(params), &p); err != nil || p.Credential == "" {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, `invalid params: "credential" must be the credential's text (clawd token issue --client KIND)`)
	}
	s.mu.Lock() // initialize takes it too: the two never interleave
	defer s.mu.Unlock()
	if s.initialized() {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "invalid request: "+MethodAuthenticate+" must come before initialize")
	}
	if s.authed {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "invalid request: this session already presented a credential")
	}
	kind, id, reason, ok := s.opts.Authenticate(p.Credential)
	if !ok {
		return nil, &jsonrpc.Error{Code: chain.CodeUnauthorized, Message: "unauthorized: " + reason,
			Data: map[string]any{"reason": reason, "hint": "present a valid credential (clawd token list; clawd token issue --client KIND)"}}
	}
	s.authed = true
	s.caller.Kind = kind
	s.caller.CredentialID = id
	s.caller.AuthMethod = "credential"
	return marshalResult(map[string]string{"kind": kind, "credential_id": id})
}
