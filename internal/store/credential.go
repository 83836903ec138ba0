package store

import (
	"context"
	"crypto/subtle"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/clawde/clawd/internal/config"
)

// Credential is one per-client credential as `clawd token list` shows it.
// The secret is not here: the store keeps only its digest.
type Credential struct {
	ID          string  `json:"id"`
	WorkspaceID string  `json:"workspace_id"`
	Kind        string  `json:"kind"`
	Label       string  `json:"label"`
	CreatedAt   string  `json:"created_at"`
	RevokedAt   *string `json:"revoked_at"`
}

// credEntry is a credential as the snapshot holds it for checks.
type credEntry struct {
	workspace, kind, digest string
	revoked                 bool
}

// maxLabel bounds a credential's label.
const maxLabel = 128

// AddCredential stores a new credential with the digest of its secret.
// Each confirm runs inside the transaction before it commits; its error
// undoes the change (the caller puts it on record there).
func (db *DB) AddCredential(ctx context.Context, c Credential, digest string, confirm ...func() error) error {
	if !config.IsClientKind(c.Kind) {
		return fmt.Errorf("client kind %q: use one of %s", c.Kind, strings.Join(config.ClientKinds, ", "))
	}
	if len(c.Label) > maxLabel {
		return invalid("--label: at most %d bytes, got %d", maxLabel, len(c.Label))
	}
	// 'clawd token list' prints it on a terminal.
	if !utf8.ValidString(c.Label) || strings.IndexFunc(c.Label, unicode.IsControl) >= 0 {
		return invalid("--label %q: use printable text, without control characters", c.Label)
	}
	return db.writeTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO cd_client_credential (id, workspace_id, kind, label, secret_sha256, created_at)
			VALUES (?, ?, ?, ?, ?, ?)`, c.ID, c.WorkspaceID, c.Kind, c.Label, digest, now())
		if err != nil {
			return err
		}
		return RunConfirms(confirm)
	})
}

// Credentials lists the credentials of one workspace, or of all when
// workspaceID is "", oldest first.
func (db *DB) Credentials(ctx context.Context, workspaceID string) ([]Credential, error) {
	q, args := `SELECT id, workspace_id, kind, label, created_at, revoked_at FROM cd_client_credential`, []any{}
	if workspaceID != "" {
		q, args = q+` WHERE workspace_id = ?`, append(args, workspaceID)
	}
	rows, err := db.rdb.QueryContext(ctx, q+` ORDER BY created_at, id`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Credential
	for rows.Next() {
		var c Credential
		var revoked sql.NullString
		if err := rows.Scan(&c.ID, &c.WorkspaceID, &c.Kind, &c.Label, &c.CreatedAt, &revoked); err != nil {
			return nil, err
		}
		if revoked.Valid {
			c.RevokedAt = &revoked.String
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// ErrNoCredential reports a credential id the store does not hold.
var ErrNoCredential = errors.New("no such credential")

// RevokeCredential marks a credential revoked; every daemon refuses it
// from its next check on (FreshFor after the commit). It returns the
// credential; revoking one twice keeps the first time. Each confirm runs
// inside the transaction, with the credential, when this call revoked it,
// before it commits; its error undoes the change.
func (db *DB) RevokeCredential(ctx context.Context, id string, confirm ...func(Credential) error) (Credential, error) {
	var c Credential
	err := db.writeTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE cd_client_credential SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`, now(), id)
		if err != nil {
			return err
		}
		changed, err := res.RowsAffected()
		if err != nil {
			return err
		}
		var revoked sql.NullString
		err = tx.QueryRowContext(ctx, `SELECT id, workspace_id, kind, label, created_at, revoked_at FROM cd_client_credential WHERE id = ?`, id).
			Scan(&c.ID, &c.WorkspaceID, &c.Kind, &c.Label, &c.CreatedAt, &revoked)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNoCredential
		}
		if err != nil {
			return err
		}
		if revoked.Valid {
			c.RevokedAt = &revoked.String
		}
		if changed == 0 {
			return nil
		}
		return runConfirms(confirm, func(f func(Credential) error) error { return f(c) })
	})
	return c, err
}

// CheckCredential verifies a presented credential (id and the digest of
// its secret) for a daemon of workspaceID and returns its kind. reason says
// why it was refused: "unknown_credential", "credential_revoked" or
// "credential_for_another_workspace". The kind is returned whenever the
// secret matched, refused or not, so that a refusal can be recorded as
// that credential's.
func (db *DB) CheckCredential(workspaceID, id, digest string) (kind, reason string, err error) {
	s, err := db.current()
	if err != nil {
		return "", "", err
	}
	e, ok := s.creds[id]
	// Compare the digest in constant time whether or not the id exists.
	want := e.digest
	if !ok {
		want = "0000000000000000000000000000000000000000000000000000000000000000"
	}
	match := subtle.ConstantTimeCompare([]byte(want), []byte(digest)) == 1
	switch {
	case !ok || !match:
		return "", "unknown_credential", nil
	case e.revoked:
		return e.kind, "credential_revoked", nil
	case e.workspace != workspaceID:
		return e.kind, "credential_for_another_workspace", nil
	}
	return e.kind, "", nil
}

// CredentialActive implements chain.CredentialStore: the credential exists
// and is not revoked.
func (db *DB) CredentialActive(id string) (bool, error) {
	s, err := db.current()
	if err != nil {
		return false, err
	}
	e, ok := s.creds[id]
	return ok && !e.revoked, nil
}

func readCredentials(ctx context.Context, q querier, into map[string]credEntry) error {
	rows, err := q.QueryContext(ctx, `SELECT id, workspace_id, kind, secret_sha256, revoked_at IS NOT NULL FROM cd_client_credential`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var e credEntry
		if err := rows.Scan(&id, &e.workspace, &e.kind, &e.digest, &e.revoked); err != nil {
			return err
		}
		into[id] = e
	}
	return rows.Err()
}
