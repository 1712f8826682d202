package schema

import (
	"fmt"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

func (c *checker) checkSecrets() {
	names := make([]string, 0, len(c.sec))
	for name := range c.sec {
		names = append(names, name)
	}
	sort.Strings(names)
	eg := egress{all: true}
	if c.sb != nil {
		eg = effectiveEgress(c.sb.Network)
	}
	for _, name := range names {
		s := c.sec[name]
		key := c.secL.at[name+".key"]
		if re := SecretName(name); re != nil {
			c.at(SecretsFile, key, SeverityError, name, re.Fix, "secret name %q %s", name, re.Why)
		}
		c.checkSecretValue(name, s, key)
		if len(s.Allow) == 0 {
			n := c.secL.at[name+".allow"]
			if n == nil {
				n = key
			}
			c.at(SecretsFile, n, SeverityError, name+".allow", "add allow: [HOST] with the hosts that may receive it",
				"secret %s has no allow host (msb rejects it: at least one allowed host is required)", name)
		}
		for i, h := range s.Allow {
			f := fmt.Sprintf("%s.allow[%d]", name, i)
			n := c.secL.at[f]
			if re := Host(h); re != nil {
				c.at(SecretsFile, n, SeverityError, f, re.Fix, "%s %q %s", f, h, re.Why)
				continue
			}
			if !eg.reaches(h) {
				fix := "add it to network.allow in sandbox.yaml (asb network allow " + h + ")"
				if c.sb.Network != nil && c.sb.Network.Policy == "none" {
					fix = "the network is none; use network: {allow: [" + h + "]}"
				}
				c.at(SecretsFile, n, SeverityWarning, f, fix,
					"%s: %s is not reachable: network.allow in sandbox.yaml does not cover it, so %s can never be used", f, h, name)
			}
		}
	}
}

// checkSecretValue checks a binding's value: a ${VAR} reference whose
// variable is set here (in the environment, secrets.env, or by a command
// recorded on this host whose programs are found).
func (c *checker) checkSecretValue(name string, s Secret, key *yaml.Node) {
	vnode := c.secL.at[name+".value"]
	switch ref, ok := EnvRef(s.Value); {
	case s.Value == "":
		c.at(SecretsFile, key, SeverityError, name+".value", fmt.Sprintf("add value: \"${%s}\" and put the real value in secrets.env", envGuess(name)),
			"secret %s has no value", name)
	case !ok && !strings.HasPrefix(s.Value, "${"):
		// Never echo s.Value: it may be the credential itself.
		c.at(SecretsFile, vnode, SeverityError, name+".value",
			fmt.Sprintf("move the value to secrets.env as %s=…, and write value: \"${%s}\" here", envGuess(name), envGuess(name)),
			"%s.value is a literal, not \"${VAR}\": msb would store the credential in plain text, and this file is committed", name)
	case ok:
		fromCmd := c.opts.FromCommand != nil && c.opts.FromCommand(name)
		if fromCmd && c.opts.CommandMissing != nil {
			if why := c.opts.CommandMissing(name); why != "" {
				c.at(SecretsFile, vnode, SeverityWarning, name+".value",
					fmt.Sprintf("install it, or record another command on this host: asb secret add %s --allow %s --from 'COMMAND' --force", name, strings.Join(s.Allow, ",")),
					"the command that gives %s its value on this host (asb secret add --from) cannot run: %s; vm:create would fail", name, why)
			}
		}
		if c.opts.Getenv(ref) == "" && !c.envFile[ref] && !fromCmd {
			c.at(SecretsFile, vnode, SeverityWarning, name+".value",
				fmt.Sprintf("set %s in secrets.env (%s=…) or export it in your shell", ref, ref),
				"%s is set neither in the environment nor in secrets.env: vm:create would fail with msb's \"host environment variable %s is not set\"", ref, ref)
		}
	}
}
