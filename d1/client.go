package d1

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/celldgo/celld/cell"
)

// Client runs D1 operations on one database through a cell.Caller: what
// the `celld d1` commands use.
type Client struct {
	Caller cell.Caller
	Cell   string // d1:<database_id or database_name>
}

// Result is the result of one statement. Values are nil, json.Number,
// string, or []any of byte values (a BLOB).
type Result struct {
	Columns []string `json:"columns"`
	Rows    [][]any  `json:"rows"`
	Meta    Meta     `json:"meta"`
}

// Query runs statements, without parameters, in one transaction.
func (c *Client) Query(ctx context.Context, stmts []string) ([]Result, error) {
	r := Request{Op: OpQuery}
	for _, s := range stmts {
		r.Stmts = append(r.Stmts, Statement{SQL: s})
	}
	var out struct {
		Results []Result `json:"results"`
	}
	if err := c.call(ctx, r, "", &out); err != nil {
		return nil, err
	}
	return out.Results, nil
}

// Import runs a SQL file in one transaction.
func (c *Client) Import(ctx context.Context, sql string) (ImportResult, error) {
	var out ImportResult
	err := c.call(ctx, Request{Op: OpImport}, sql, &out)
	return out, err
}

// AppliedMigrations returns the rows of the migrations table, creating
// the table if it is missing (as Wrangler does).
func (c *Client) AppliedMigrations(ctx context.Context, table string) ([]AppliedMigration, error) {
	var out MigrationsList
	err := c.call(ctx, Request{Op: OpMigrationsList, Table: table}, "", &out)
	return out.Applied, err
}

// ApplyMigration runs one migration file and records it in table, in one
// transaction.
func (c *Client) ApplyMigration(ctx context.Context, table string, f MigrationFile) (MigrationApplied, error) {
	var out MigrationApplied
	src, err := os.ReadFile(f.Path)
	if err != nil {
		return out, fmt.Errorf("read migration: %w", err)
	}
	err = c.call(ctx, Request{Op: OpMigrationApply, Table: table, Name: f.Name}, string(src), &out)
	return out, err
}

func (c *Client) call(ctx context.Context, r Request, payload string, out any) error {
	req, err := EncodeRequest(r, payload)
	if err != nil {
		return err
	}
	ans, err := c.Caller.Call(ctx, c.Cell, req)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(ans))
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("decode the answer of %s: %w", c.Cell, err)
	}
	return nil
}

// MigrationError is a migration that failed. Nothing of it is in the
// database: the file and its record commit together or not at all.
type MigrationError struct {
	Name string
	Err  error
}

func (e *MigrationError) Error() string {
	return fmt.Sprintf("migration %s failed: %v", e.Name, e.Err)
}

func (e *MigrationError) Unwrap() error { return e.Err }

// Migrate applies pending files in order, each with its record in one
// transaction, and stops at the first that fails (a *MigrationError):
// the ones before it stay applied. after, if set, is called after each
// file with its outcome. It returns how many files it applied.
func (c *Client) Migrate(ctx context.Context, table string, pending []MigrationFile, after func(MigrationFile, error)) (int, error) {
	n := 0
	for _, f := range pending {
		_, err := c.ApplyMigration(ctx, table, f)
		if after != nil {
			after(f, err)
		}
		if err != nil {
			return n, &MigrationError{Name: f.Name, Err: err}
		}
		n++
	}
	return n, nil
}
