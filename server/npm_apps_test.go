package server

import (
	"os"
	"path/filepath"
	"testing"
)

// TestNPMApps deploys each small app in testdata/npm/apps — real Worker
// code on npm libraries used unchanged (React, Preact and Vue server
// rendering; Hono with its JWT middleware, JSX streaming, zod-validator
// and zod-openapi; tRPC and graphql-js; drizzle-orm on D1 and on a Durable
// Object's SQL storage, Kysely on D1; itty-router over uuid, cookie, the
// noble hashes and curves, superjson, valibot, marked, yaml, lodash-es,
// date-fns with time zones and jose JWKS; the OpenAI and AI SDKs, cheerio,
// ky, rxjs; intl-messageformat, i18next, change-case, validator,
// libphonenumber-js, chrono-node, decimal.js; Node.js built-ins and
// Node-only CommonJS libraries such as xml2js, csv-parse, iconv-lite and
// busboy) — to its own node and replays its cases.json, recorded on
// workerd by testdata/npm/apps/record.mjs. The packages come from the
// folder's package-lock.json through one `npm ci` (scripts/npm-testdata,
// or here when node_modules does not match the lock file).
func TestNPMApps(t *testing.T) {
	root, err := filepath.Abs("testdata/npm/apps")
	if err != nil {
		t.Fatal(err)
	}
	npmCI(t, root)
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		dir := filepath.Join(root, e.Name())
		if _, err := os.Stat(filepath.Join(dir, "cases.json")); !e.IsDir() || err != nil {
			continue
		}
		n++
		t.Run(e.Name(), func(t *testing.T) {
			replayFixture(t, startFixtureNode(t, dir), dir)
		})
	}
	if n == 0 {
		t.Fatal("no apps found in testdata/npm/apps")
	}
}
