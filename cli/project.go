package cli

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/celldgo/celld/deploy"
)

// findConfig returns explicit, or the project config (wrangler.jsonc, then
// wrangler.json) in dir; "" when there is none.
func findConfig(dir, explicit string) string {
	if explicit != "" {
		return explicit
	}
	for _, n := range deploy.ConfigNames {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			return filepath.Join(dir, n)
		}
	}
	return ""
}

// readConfigSection decodes the parts of the JSONC config at path that v
// names; every other key is ignored (a config celld deploy would refuse
// still names its databases and namespaces).
func readConfigSection(path string, v any) error {
	src, err := os.ReadFile(path)
	if err != nil {
		return usageErr("read config: %v", err)
	}
	plain, err := deploy.StripJSONC(src)
	if err != nil {
		return usageErr("%s:%v", path, err)
	}
	if err := json.Unmarshal(plain, v); err != nil {
		return usageErr("%s: %v", path, err)
	}
	return nil
}
