package daemon

import (
	"net/http"

	"github.com/clawde/clawd/internal/restapi"
	"github.com/clawde/clawd/internal/transport"
)

// restAPI is the REST API the HTTP listener serves under /api/
// (docs/upstreams.md): the table through the store, test, refresh and logs
// through this daemon's upstream manager, changes into the audit log. The
// transport authenticates first; the caller's entity is the kind its
// credential maps to, on this workspace, exactly as for a tools/call.
func (d *Daemon) restAPI() http.Handler {
	api := &restapi.API{
		DB:      d.Store,
		Configs: UpstreamConfigs,
		Audit:   d.Chain.Audit,
		Logger:  d.Logger.With("component", "restapi"),
		Identify: func(r *http.Request) (restapi.Caller, bool) {
			id, ok := transport.RequestIdentity(r.Context())
			if !ok || id.Kind == "" {
				return restapi.Caller{}, false
			}
			return restapi.Caller{Entity: id.Kind + ":" + d.WorkspaceID, Kind: id.Kind, CredentialID: id.CredentialID}, true
		},
	}
	if d.upstreams != nil { // nil when this clawd runs as another clawd's upstream
		api.Upstreams = d.upstreams
	}
	return api
}
