package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/clawde/clawd/internal/support/secrets"
)

// Errors of the MCP server methods besides validation (ValidationError).
var (
	ErrServerNotFound = errors.New("no such MCP server")
	ErrServerExists   = errors.New("an MCP server of that name exists")
	ErrBuiltinServer  = errors.New("the built-in server (clawd's own tools) cannot be deleted or changed")
)

// MCPServer is one row of cd_mcp_server: an upstream MCP server clawd
// connects to, or the built-in row standing for clawd's own tools.
//
// Env and Headers hold the stored values (literals and unresolved ${VAR}
// references) for the daemon; printing a MCPServer in any way (fmt, JSON,
// slog) shows View, where they, the URL's query and the last error are
// masked.
type MCPServer struct {
	ID                    int64
	Name                  string
	Description           string
	Transport             string // TransportStdio, TransportHTTP, TransportSSE or TransportBuiltin
	Command               string
	Args                  []string
	Cwd                   string
	Env                   SecretMap
	URL                   string
	Headers               SecretMap
	ConnectTimeoutSeconds int
	ReadTimeoutSeconds    int
	Enabled               bool
	Builtin               bool
	CreatedAt             string
	UpdatedAt             string
	LastStatus            string // one of Statuses
	LastError             string
	LastConnectedAt       string // "" until the first successful connection
	ToolCount             int
	// IdentityMode is off, meta or signed; IdentityArg and
	// IdentityAudience are "" for the defaults (docs/upstreams.md).
	IdentityMode     string
	IdentityArg      string
	IdentityAudience string
}

// MCPServerView is a row as every output shows it (`clawd mcp list --json`,
// later the REST API): env and header values masked (secrets.MaskRefValue), the
// URL's query values masked (MaskURL), the last error through
// secrets.MaskText. Arguments are shown as stored: put a secret in --env
// as a ${VAR} reference, not on the command line.
type MCPServerView struct {
	ID                    int64             `json:"id"`
	Name                  string            `json:"name"`
	Description           string            `json:"description"`
	Transport             string            `json:"transport"`
	Command               string            `json:"command"`
	Args                  []string          `json:"args"`
	Cwd                   string            `json:"cwd"`
	Env                   map[string]string `json:"env"`
	URL                   string            `json:"url"`
	Headers               map[string]string `json:"headers"`
	ConnectTimeoutSeconds int               `json:"connect_timeout_seconds"`
	ReadTimeoutSeconds    int               `json:"read_timeout_seconds"`
	Enabled               bool              `json:"enabled"`
	Builtin               bool              `json:"builtin"`
	CreatedAt             string            `json:"created_at"`
	UpdatedAt             string            `json:"updated_at"`
	LastStatus            string            `json:"last_status"`
	LastError             string            `json:"last_error"`
	LastConnectedAt       string            `json:"last_connected_at"`
	ToolCount             int               `json:"tool_count"`
	IdentityMode          string            `json:"identity_mode"`
	IdentityArg           string            `json:"identity_arg"`
	IdentityAudience      string            `json:"identity_audience"`
}

// View is the masked form of s.
func (s MCPServer) View() MCPServerView {
	args := s.Args
	if args == nil {
		args = []string{}
	}
	return MCPServerView{
		ID: s.ID, Name: s.Name, Description: s.Description, Transport: s.Transport,
		Command: s.Command, Args: args, Cwd: s.Cwd, Env: s.Env.Masked(),
		URL: secrets.MaskURL(s.URL), Headers: s.Headers.Masked(),
		ConnectTimeoutSeconds: s.ConnectTimeoutSeconds, ReadTimeoutSeconds: s.ReadTimeoutSeconds,
		Enabled: s.Enabled, Builtin: s.Builtin, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt,
		LastStatus: s.LastStatus, LastError: secrets.MaskTextWithURL(s.LastError, s.URL), LastConnectedAt: s.LastConnectedAt,
		ToolCount:    s.ToolCount,
		IdentityMode: s.IdentityMode, IdentityArg: s.IdentityArg, IdentityAudience: s.IdentityAudience,
	}
}

// MarshalJSON writes View.
func (s MCPServer) MarshalJSON() ([]byte, error) { return json.Marshal(s.View()) }

// Format prints View whatever the verb.
func (s MCPServer) Format(f fmt.State, verb rune) {
	if f.Flag('+') || f.Flag('#') {
		fmt.Fprintf(f, "%+v", s.View())
		return
	}
	fmt.Fprintf(f, "%v", s.View())
}

// LogValue gives slog View.
func (s MCPServer) LogValue() slog.Value { return slog.AnyValue(s.View()) }

// NewStdioServer and NewHTTPServer return a row with the defaults
// (enabled, 30 s connect and 60 s read timeouts) for InsertServer.
func NewStdioServer(name, command string, args []string) MCPServer {
	return MCPServer{Name: name, Transport: TransportStdio, Command: command, Args: args, Enabled: true,
		ConnectTimeoutSeconds: DefaultConnectTimeout, ReadTimeoutSeconds: DefaultReadTimeout, IdentityMode: IdentityOff}
}

// NewHTTPServer: transport is TransportHTTP or TransportSSE.
func NewHTTPServer(name, transport, url string) MCPServer {
	return MCPServer{Name: name, Transport: transport, URL: url, Enabled: true,
		ConnectTimeoutSeconds: DefaultConnectTimeout, ReadTimeoutSeconds: DefaultReadTimeout, IdentityMode: IdentityOff}
}

const serverColumns = `id, name, description, transport, command, args, cwd, env, url, headers,
	connect_timeout_s, read_timeout_s, enabled, builtin, created_at, updated_at,
	last_status, last_error, last_connected_at, tool_count,
	identity_mode, identity_arg, identity_audience`

type rowScanner interface{ Scan(dest ...any) error }

func scanServer(r rowScanner) (MCPServer, error) {
	var s MCPServer
	var command, cwd, url, lastErr, lastConn, idArg, idAud sql.NullString
	var args, env, headers string
	err := r.Scan(&s.ID, &s.Name, &s.Description, &s.Transport, &command, &args, &cwd, &env, &url, &headers,
		&s.ConnectTimeoutSeconds, &s.ReadTimeoutSeconds, &s.Enabled, &s.Builtin, &s.CreatedAt, &s.UpdatedAt,
		&s.LastStatus, &lastErr, &lastConn, &s.ToolCount,
		&s.IdentityMode, &idArg, &idAud)
	if err != nil {
		return s, err
	}
	s.IdentityArg, s.IdentityAudience = idArg.String, idAud.String
	s.Command, s.Cwd, s.URL, s.LastError, s.LastConnectedAt = command.String, cwd.String, url.String, lastErr.String, lastConn.String
	if err := json.Unmarshal([]byte(args), &s.Args); err != nil {
		return s, fmt.Errorf("MCP server %s: args: %w", s.Name, err)
	}
	if err := json.Unmarshal([]byte(env), &s.Env); err != nil {
		return s, fmt.Errorf("MCP server %s: env: %w", s.Name, err)
	}
	if err := json.Unmarshal([]byte(headers), &s.Headers); err != nil {
		return s, fmt.Errorf("MCP server %s: headers: %w", s.Name, err)
	}
	return s, nil
}

// MCPServers lists every row, the built-in one first, then by name.
func (db *DB) MCPServers(ctx context.Context) ([]MCPServer, error) {
	return listServers(ctx, db.rdb)
}

// listServers reads every row through q (the database, or a transaction),
// as MCPServers orders them.
func listServers(ctx context.Context, q querier) ([]MCPServer, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+serverColumns+` FROM cd_mcp_server ORDER BY builtin DESC, name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []MCPServer
	for rows.Next() {
		s, err := scanServer(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// MCPServer returns the row with this id, or ErrServerNotFound.
func (db *DB) MCPServer(ctx context.Context, id int64) (MCPServer, error) {
	return getServer(ctx, db.rdb, `id = ?`, id)
}

// MCPServerByName returns the row with this name (without regard to
// case), or ErrServerNotFound.
func (db *DB) MCPServerByName(ctx context.Context, name string) (MCPServer, error) {
	return getServer(ctx, db.rdb, `name = ?`, name)
}

type rowQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func getServer(ctx context.Context, q rowQuerier, where string, arg any) (MCPServer, error) {
	s, err := scanServer(q.QueryRowContext(ctx, `SELECT `+serverColumns+` FROM cd_mcp_server WHERE `+where, arg))
	if errors.Is(err, sql.ErrNoRows) {
		return s, fmt.Errorf("%w: %v", ErrServerNotFound, arg)
	}
	return s, err
}

// encodeConfig is the JSON of the row's list and map columns (map keys
// sorted: stable text).
func encodeConfig(s *MCPServer) (args, env, headers string, err error) {
	a, e, h := s.Args, map[string]string(s.Env), map[string]string(s.Headers)
	if a == nil {
		a = []string{}
	}
	if e == nil {
		e = map[string]string{}
	}
	if h == nil {
		h = map[string]string{}
	}
	var b []byte
	if b, err = json.Marshal(a); err != nil {
		return
	}
	args = string(b)
	if b, err = json.Marshal(e); err != nil {
		return
	}
	env = string(b)
	if b, err = json.Marshal(h); err != nil {
		return
	}
	return args, env, string(b), nil
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// InsertServer validates and stores a new upstream (ID, Builtin, times and
// status in s are ignored) and returns the stored row. A name taken
// without regard to case is ErrServerExists. Each confirm runs before the
// insert commits (Confirm).
func (db *DB) InsertServer(ctx context.Context, s MCPServer, confirm ...Confirm) (MCPServer, error) {
	if err := validateServer(&s); err != nil {
		return MCPServer{}, err
	}
	args, env, headers, err := encodeConfig(&s)
	if err != nil {
		return MCPServer{}, err
	}
	var id int64
	err = db.writeTx(ctx, func(tx *sql.Tx) error {
		if err := nameFree(ctx, tx, s.Name, 0); err != nil {
			return err
		}
		t := now()
		res, err := tx.ExecContext(ctx, `INSERT INTO cd_mcp_server (name, description, transport, command, args, cwd, env, url, headers,
			connect_timeout_s, read_timeout_s, enabled, builtin, created_at, updated_at,
			identity_mode, identity_arg, identity_audience)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?)`,
			s.Name, s.Description, s.Transport, nullIfEmpty(s.Command), args, nullIfEmpty(s.Cwd), env, nullIfEmpty(s.URL), headers,
			s.ConnectTimeoutSeconds, s.ReadTimeoutSeconds, s.Enabled, t, t,
			s.IdentityMode, nullIfEmpty(s.IdentityArg), nullIfEmpty(s.IdentityAudience))
		if err != nil {
			return err
		}
		if id, err = res.LastInsertId(); err != nil {
			return err
		}
		return confirmTx(ctx, tx, confirm, MCPServer{}, id)
	})
	if err != nil {
		return MCPServer{}, err
	}
	return db.MCPServer(ctx, id)
}

// AddedSummary is how the audit row of a new server describes it: its
// transport and command, or its URL as View shows it (credentials in the
// URL masked), and whether it starts disabled. Free text: the row masks it.
func (s MCPServer) AddedSummary() string {
	what := s.Transport + " server"
	if s.Transport == TransportStdio {
		what += " running " + s.Command
	} else {
		what += " at " + s.View().URL
	}
	if !s.Enabled {
		what += " (disabled)"
	}
	return what
}

// nameFree fails with ErrServerExists if another row (not id) has name.
func nameFree(ctx context.Context, tx *sql.Tx, name string, id int64) error {
	var other string
	err := tx.QueryRowContext(ctx, `SELECT name FROM cd_mcp_server WHERE name = ? AND id <> ?`, name, id).Scan(&other)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return err
	case other == name:
		return fmt.Errorf("%w: %s", ErrServerExists, name)
	}
	return fmt.Errorf("%w: %s (names are compared without regard to case)", ErrServerExists, other)
}

// MCPServerPatch is an update with PATCH semantics: nil fields keep their
// value. Changing Transport between stdio and http/sse clears the fields
// of the other kind (command, args, cwd, env or url, headers) before the
// patch's own fields apply; the result must then be a valid row.
type MCPServerPatch struct {
	Name                  *string
	Description           *string
	Transport             *string
	Command               *string
	Args                  *[]string
	Cwd                   *string
	Env                   *SecretMap
	URL                   *string
	Headers               *SecretMap
	ConnectTimeoutSeconds *int
	ReadTimeoutSeconds    *int
	Enabled               *bool
	IdentityMode          *string
	IdentityArg           *string // "" restores the mode's default
	IdentityAudience      *string // "" restores the server's name
}

// Apply returns s with p applied: the fields p sets replace s's; a
// change between stdio and a remote transport clears the other kind's
// fields. It validates nothing (AddServer and UpdateServer do).
func (p MCPServerPatch) Apply(s MCPServer) (MCPServer, error) {
	if p.Transport != nil {
		t, err := ParseTransport(*p.Transport)
		if err != nil {
			return s, err
		}
		if (t == TransportStdio) != (s.Transport == TransportStdio) {
			s.Command, s.Args, s.Cwd, s.Env, s.URL, s.Headers = "", nil, "", nil, "", nil
		}
		s.Transport = t
	}
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	set(&s.Name, p.Name)
	set(&s.Description, p.Description)
	set(&s.Command, p.Command)
	set(&s.Cwd, p.Cwd)
	set(&s.URL, p.URL)
	if p.Args != nil {
		s.Args = *p.Args
	}
	if p.Env != nil {
		s.Env = *p.Env
	}
	if p.Headers != nil {
		s.Headers = *p.Headers
	}
	if p.ConnectTimeoutSeconds != nil {
		s.ConnectTimeoutSeconds = *p.ConnectTimeoutSeconds
	}
	if p.ReadTimeoutSeconds != nil {
		s.ReadTimeoutSeconds = *p.ReadTimeoutSeconds
	}
	if p.Enabled != nil {
		s.Enabled = *p.Enabled
	}
	set(&s.IdentityMode, p.IdentityMode)
	set(&s.IdentityArg, p.IdentityArg)
	set(&s.IdentityAudience, p.IdentityAudience)
	return s, nil
}

// UpdateServer applies a patch to the row with this id and returns the
// stored row. The built-in row is ErrBuiltinServer; a missing one
// ErrServerNotFound; a name another row has ErrServerExists. Each confirm
// runs before the update commits (Confirm), also when it changed nothing.
func (db *DB) UpdateServer(ctx context.Context, id int64, p MCPServerPatch, confirm ...Confirm) (MCPServer, error) {
	err := db.writeTx(ctx, func(tx *sql.Tx) error {
		cur, err := getServer(ctx, tx, `id = ?`, id)
		if err != nil {
			return err
		}
		if cur.Builtin {
			return ErrBuiltinServer
		}
		s, err := p.Apply(cur)
		if err != nil {
			return err
		}
		if err := validateServer(&s); err != nil {
			return err
		}
		if err := nameFree(ctx, tx, s.Name, id); err != nil {
			return err
		}
		args, env, headers, err := encodeConfig(&s)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE cd_mcp_server SET name = ?, description = ?, transport = ?, command = ?, args = ?,
			cwd = ?, env = ?, url = ?, headers = ?, connect_timeout_s = ?, read_timeout_s = ?, enabled = ?, updated_at = ?,
			identity_mode = ?, identity_arg = ?, identity_audience = ?
			WHERE id = ?`,
			s.Name, s.Description, s.Transport, nullIfEmpty(s.Command), args, nullIfEmpty(s.Cwd), env, nullIfEmpty(s.URL), headers,
			s.ConnectTimeoutSeconds, s.ReadTimeoutSeconds, s.Enabled, now(),
			s.IdentityMode, nullIfEmpty(s.IdentityArg), nullIfEmpty(s.IdentityAudience), id)
		if err != nil {
			return err
		}
		return confirmTx(ctx, tx, confirm, cur, id)
	})
	if err != nil {
		return MCPServer{}, err
	}
	return db.MCPServer(ctx, id)
}

// SetServerEnabled turns a server on or off; changed is false if it
// already was. Each confirm runs before the change commits (Confirm); it
// does not run when nothing changes.
func (db *DB) SetServerEnabled(ctx context.Context, id int64, enabled bool, confirm ...Confirm) (changed bool, err error) {
	err = db.writeTx(ctx, func(tx *sql.Tx) error {
		cur, err := getServer(ctx, tx, `id = ?`, id)
		if err != nil {
			return err
		}
		if cur.Builtin {
			return ErrBuiltinServer
		}
		if cur.Enabled == enabled {
			return nil
		}
		if _, err = tx.ExecContext(ctx, `UPDATE cd_mcp_server SET enabled = ?, updated_at = ? WHERE id = ?`, enabled, now(), id); err != nil {
			return err
		}
		if err := confirmTx(ctx, tx, confirm, cur, id); err != nil {
			return err
		}
		changed = true
		return nil
	})
	if err != nil {
		changed = false
	}
	return changed, err
}

// DeleteServer removes an upstream and its tools cache. The built-in row
// is ErrBuiltinServer (a trigger refuses it too). Each confirm runs
// before the delete commits (Confirm).
func (db *DB) DeleteServer(ctx context.Context, id int64, confirm ...Confirm) error {
	return db.writeTx(ctx, func(tx *sql.Tx) error {
		cur, err := getServer(ctx, tx, `id = ?`, id)
		if err != nil {
			return err
		}
		if cur.Builtin {
			return ErrBuiltinServer
		}
		if _, err = tx.ExecContext(ctx, `DELETE FROM cd_mcp_server WHERE id = ?`, id); err != nil {
			return err
		}
		return confirmTx(ctx, tx, confirm, cur, 0)
	})
}
