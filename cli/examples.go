package cli

import (
	"strings"

	"github.com/urfave/cli/v3"
)

// commandExamples are the examples each command's --help ends with, by
// full command name. A test walks the tree: every command needs one.
var commandExamples = map[string][]string{
	"celld": {
		"celld dev examples/counter",
		"celld --bucket s3://fleet --endpoint http://127.0.0.1:9000 diagnose",
		"celld completion bash > /etc/bash_completion.d/celld",
	},
	"celld diagnose": {
		"celld diagnose --bucket s3://fleet --endpoint http://127.0.0.1:9000",
		"celld diagnose --bucket s3://fleet --read-only --json",
	},
	"celld serve": {
		"CELLD_BUCKET=s3://fleet CELLD_NODE=node-a celld serve --listen 0.0.0.0:8080 --internal-listen 10.0.0.5:8081",
		"celld serve --bucket file:///var/lib/celld/bucket --node solo",
	},
	"celld dev": {
		"celld dev examples/counter",
		"celld dev . --clean --port 8787 --var GREETING:hi",
		"celld dev . --test-scheduled   # then: curl 'http://127.0.0.1:9876/__scheduled?cron=*+*+*+*+*'",
	},
	"celld cell": {
		"celld cell list --bucket s3://fleet",
		"celld cell export d1:ledger --bucket s3://fleet -o ledger.sqlite",
	},
	"celld cell list": {
		"celld cell list --bucket s3://fleet",
		"celld cell list --bucket s3://fleet --json | jq -r '.[] | select(.owner_live) | .cell'",
	},
	"celld cron": {
		"celld cron list --bucket s3://fleet",
	},
	"celld cron list": {
		"celld cron list --bucket s3://fleet",
		"celld cron list --bucket s3://fleet --json | jq '.triggers[] | {cron, next, last_outcome}'",
	},
	"celld deploy": {
		"celld deploy ./my-worker --bucket s3://fleet",
		"celld deploy ./my-worker --dry-run --json",
		"celld deploy --bucket s3://fleet --list",
		"celld deploy --bucket s3://fleet --rollback",
	},
	"celld top": {
		"celld top --bucket s3://fleet",
		"celld top --node 10.0.0.5:8081 --node 10.0.0.6:8081 --once",
		"celld top --bucket s3://fleet --json | jq '.totals'",
	},
	"celld queue": {
		"celld queue info jobs --bucket s3://fleet",
		"celld queue purge jobs --bucket s3://fleet --force",
	},
	"celld queue list": {
		"celld queue list --bucket s3://fleet",
		"celld queue list --bucket s3://fleet --json | jq -r '.[] | select(.owner_live) | .name'",
	},
	"celld queue info": {
		"celld queue info jobs --bucket s3://fleet",
		"celld queue info jobs --bucket s3://fleet --json | jq .ready",
	},
	"celld queue pause-delivery": {
		"celld queue pause-delivery jobs --bucket s3://fleet",
		"celld queue pause jobs --bucket s3://fleet",
	},
	"celld queue resume-delivery": {
		"celld queue resume-delivery jobs --bucket s3://fleet",
		"celld queue resume jobs --bucket s3://fleet",
	},
	"celld queue purge": {
		"celld queue purge jobs --bucket s3://fleet",
		"celld queue purge jobs --bucket s3://fleet --force",
	},
	"celld queue peek": {
		"celld queue peek jobs --bucket s3://fleet --limit 5",
		"celld queue peek jobs --bucket s3://fleet --json | jq -r '.[].body | @base64d'",
	},
	"celld queue redrive": {
		"celld queue redrive jobs-dlq --bucket s3://fleet",
		"celld queue redrive jobs-dlq --bucket s3://fleet --limit 10",
	},
	"celld kv": {
		"celld kv key put greeting hello --binding KV",
		"celld kv bulk put pairs.json --namespace-id 0f2ac74b498b48028cb68387c421e279",
	},
	"celld kv key": {
		"celld kv key put greeting hello --binding KV --ttl 3600",
		"celld kv key get greeting --binding KV --text",
	},
	"celld kv key put": {
		"celld kv key put greeting hello --binding KV --metadata '{\"lang\":\"en\"}'",
		"celld kv key put logo --path logo.png --namespace-id 0f2ac74b498b48028cb68387c421e279",
	},
	"celld kv key get": {
		"celld kv key get greeting --binding KV --text",
		"celld kv key get logo --binding KV > logo.png",
	},
	"celld kv key delete": {"celld kv key delete greeting --binding KV"},
	"celld kv key list": {
		"celld kv key list --binding KV --prefix user: > keys.json",
	},
	"celld kv bulk": {
		"celld kv bulk put pairs.json --binding KV",
		"celld kv bulk get keys.json --binding KV > backup.json",
	},
	"celld kv bulk put": {
		"celld kv bulk put pairs.json --binding KV",
		"celld kv bulk put backup.json --namespace-id 0f2ac74b498b48028cb68387c421e279",
	},
	"celld kv bulk get": {
		"celld kv key list --binding KV > keys.json",
		"celld kv bulk get keys.json --binding KV > backup.json",
		"celld kv bulk put backup.json --namespace-id OTHER_ID",
	},
	"celld kv bulk delete": {"celld kv bulk delete keys.json --binding KV --force"},
	"celld d1": {
		"celld d1 execute ledger --command 'SELECT count(*) FROM users'",
		"celld d1 migrate ledger",
	},
	"celld d1 execute": {
		"celld d1 execute ledger --command 'SELECT * FROM users LIMIT 5' --json",
		"celld d1 execute ledger --file dump.sql",
	},
	"celld d1 migrations": {
		"celld d1 migrations list ledger",
		"celld d1 migrations apply ledger ./my-worker",
	},
	"celld d1 migrations list":  {"celld d1 migrations list ledger ./my-worker --json"},
	"celld d1 migrations apply": {"celld d1 migrations apply ledger ./my-worker"},
	"celld d1 migrate":          {"celld d1 migrate ledger", "celld d1 migrate ledger ./my-worker --env staging"},
	"celld r2": {
		"celld r2 object put assets/logo.png --file logo.png --content-type image/png",
		"celld r2 object list assets --prefix img/ --all",
	},
	"celld r2 object": {
		"celld r2 object get assets/logo.png --file logo.png",
		"celld r2 object head assets/logo.png --json",
	},
	"celld r2 object get":    {"celld r2 object get assets/logo.png --file logo.png", "celld r2 object get assets/data.csv --pipe | head"},
	"celld r2 object put":    {"celld r2 object put assets/logo.png --file logo.png --content-type image/png", "tar c dir | celld r2 object put backups/dir.tar --pipe"},
	"celld r2 object delete": {"celld r2 object delete assets/logo.png"},
	"celld r2 object head":   {"celld r2 object head assets/logo.png --json"},
	"celld r2 object list":   {"celld r2 object list assets --prefix img/ --all --json"},
	"celld r2 get":           {"celld r2 get assets logo.png --file logo.png"},
	"celld r2 put":           {"celld r2 put assets logo.png --file logo.png"},
	"celld r2 delete":        {"celld r2 delete assets logo.png"},
	"celld r2 head":          {"celld r2 head assets logo.png"},
	"celld r2 list":          {"celld r2 list assets"},
	"celld secret": {
		"printf %s \"$API_TOKEN\" | celld secret put API_TOKEN --bucket s3://fleet",
		"celld secret list --bucket s3://fleet",
	},
	"celld secret put":    {"printf %s \"$API_TOKEN\" | celld secret put API_TOKEN --bucket s3://fleet"},
	"celld secret delete": {"celld secret delete API_TOKEN --bucket s3://fleet"},
	"celld secret list":   {"celld secret list --bucket s3://fleet --env staging"},
	"celld completion": {
		"source <(celld completion bash)",
		"celld completion zsh > \"${fpath[1]}/_celld\"",
		"celld completion fish > ~/.config/fish/completions/celld.fish",
	},
	"celld completion bash": {"source <(celld completion bash)", "celld completion bash > /etc/bash_completion.d/celld"},
	"celld completion zsh":  {"source <(celld completion zsh)"},
	"celld completion fish": {"celld completion fish > ~/.config/fish/completions/celld.fish"},
	"celld completion pwsh": {"celld completion pwsh > celld.ps1"},
}

// addExamples ends the description of c and of every command under it
// (named from prefix) with its examples, unless it has its own.
func addExamples(c *cli.Command, prefix string) {
	name := strings.TrimSpace(prefix + " " + c.Name)
	if ex := commandExamples[name]; len(ex) > 0 && !strings.Contains(c.Description, "Example") {
		d := strings.TrimRight(c.Description, "\n")
		if d != "" {
			d += "\n\n"
		}
		c.Description = d + "Examples:\n  " + strings.Join(ex, "\n  ")
	}
	for _, sub := range c.Commands {
		addExamples(sub, name)
	}
}

// configureCompletion shows `celld completion bash|zsh|fish|pwsh` in the
// help (urfave/cli adds it hidden) and gives it an example.
func configureCompletion(c *cli.Command) {
	c.Hidden = false
	c.Usage = "print the shell completion script for bash, zsh, fish or PowerShell"
	c.Description = "Prints a script that completes celld's commands, subcommands and flags; the shell asks\n" +
		"celld itself for the candidates as you type, so it follows the installed version."
	addExamples(c, "celld")
}
