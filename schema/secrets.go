package schema

// Secrets is the map `msb create --secret-conf` reads (secrets.yaml):
// secret name → binding.
type Secrets map[string]Secret

// Secret is one credential binding. Value must be a "${VAR}" reference: msb
// then stores only the variable's name and reads the value from the host
// environment when the VM starts. A literal would be stored in plain text.
type Secret struct {
	Value              string        `yaml:"value" json:"value" validate:"required"`
	Placeholder        string        `yaml:"placeholder,omitempty" json:"placeholder,omitempty"`
	Allow              []string      `yaml:"allow,omitempty" json:"allow,omitempty" validate:"dive,asb_host"`
	Substitution       *Substitution `yaml:"substitution,omitempty" json:"substitution,omitempty"`
	Passthrough        []string      `yaml:"passthrough,omitempty" json:"passthrough,omitempty"`
	ViolationAction    string        `yaml:"violation_action,omitempty" json:"violation_action,omitempty" validate:"omitempty,oneof=block block-and-log block-and-terminate"`
	RequireTLSIdentity *bool         `yaml:"require_tls_identity,omitempty" json:"require_tls_identity,omitempty"`
}

// Substitution says where in a request the proxy swaps the placeholder for
// the value.
type Substitution struct {
	Headers *bool `yaml:"headers,omitempty" json:"headers,omitempty"`
	Query   *bool `yaml:"query,omitempty" json:"query,omitempty"`
	Body    *bool `yaml:"body,omitempty" json:"body,omitempty"`
}

// EnvRef returns VAR when value is exactly "${VAR}" with a valid name.
func EnvRef(value string) (string, bool) {
	if len(value) < 4 || value[:2] != "${" || value[len(value)-1] != '}' {
		return "", false
	}
	name := value[2 : len(value)-1]
	return name, ValidEnvName(name)
}
