package deploy

import "fmt"

// Service is one entry of "services": env.<Binding> is a service binding
// to the Worker Service, at its entrypoint (an exported WorkerEntrypoint
// class; "" the default export), whose ctx.props is Props. celld runs one
// Worker per fleet, so Service must name this Worker; Environment and
// Remote are Wrangler's switches for other Workers and are refused or
// ignored accordingly.
type Service struct {
	Binding     string         `json:"binding"`
	Service     string         `json:"service"`
	Entrypoint  string         `json:"entrypoint,omitempty"`
	Props       map[string]any `json:"props,omitempty"`
	Environment string         `json:"environment,omitempty"`
	Remote      bool           `json:"remote,omitempty"`
}

// validateServices checks each service binding names this Worker (the
// binding names themselves are checked with the others).
func (c *Config) validateServices() []string {
	var ps []string
	for i, s := range c.Services {
		at := fmt.Sprintf("services[%d] (binding %s)", i, s.Binding)
		switch {
		case s.Service == "":
			ps = append(ps, fmt.Sprintf(`%s: "service" is required`, at))
		case s.Service != c.Name:
			ps = append(ps, fmt.Sprintf(`%s: service %q is another Worker; a celld fleet runs one Worker, so a service binding can only name this one (%q) and its entrypoints`, at, s.Service, c.Name))
		case s.Environment != "":
			ps = append(ps, fmt.Sprintf(`%s: "environment" names another deployment of a Worker; a celld fleet runs one (remove it, or use --env)`, at))
		}
		if s.Entrypoint != "" && !jsIdentifier.MatchString(s.Entrypoint) {
			ps = append(ps, fmt.Sprintf("%s: entrypoint %q is not a JavaScript identifier (the name of an exported class)", at, s.Entrypoint))
		}
	}
	return ps
}

// Entrypoints are the exports the service bindings name ("" the default
// export), for the startability check.
func (m Manifest) Entrypoints() []string {
	var out []string
	for _, s := range m.Services {
		out = append(out, s.Entrypoint)
	}
	return out
}
