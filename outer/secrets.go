package outer

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agents-sandbox/asb/internal/yamledit"
	"github.com/agents-sandbox/asb/schema"
)

// SecretRequest is a credential binding to add (`asb secret add`).
type SecretRequest struct {
	Name  string
	Hosts []string
	// Query and Body, when set, choose whether the value is also substituted
	// in the URL's query and the request body (nil: as before, or false).
	Query, Body *bool
	// Force replaces the hosts of a secret that is bound already.
	Force bool
	// FromCommand: the value comes from a command (asb secret add --from),
	// so secrets.env gets no line for it.
	FromCommand bool
}

// SecretEdit says what AddSecret did.
type SecretEdit struct {
	Replaced bool    // the secret was bound already (Force)
	Net      NetEdit // what its hosts did to sandbox.yaml's network
	EnvLine  bool    // a commented "# NAME=" line was added to secrets.env
	Warnings []schema.Problem
}

// AddSecret binds r.Name in secrets.yaml, lets the VM reach its hosts in
// sandbox.yaml, adds a commented line to secrets.env when the name has
// none, and commits all of it or nothing. No value is ever written.
func (f *Folder) AddSecret(r SecretRequest) (SecretEdit, error) {
	var e SecretEdit
	if re := schema.SecretName(r.Name); re != nil {
		return e, schema.RuleField("NAME", re)
	}
	if err := CheckHosts("--allow", r.Hosts); err != nil {
		return e, err
	}
	sdoc, sroot, err := f.Doc(SecretsFile)
	if err != nil {
		return e, err
	}
	existing := yamledit.Get(sroot, r.Name)
	switch {
	case existing != nil && !r.Force:
		return e, fmt.Errorf("secret %s is bound already (to %s); remove it first with asb secret rm %s, or pass --force to replace its hosts",
			r.Name, strings.Join(yamledit.Strings(yamledit.Get(existing, "allow")), ", "), r.Name)
	case existing != nil && existing.Kind == yaml.MappingNode:
		e.Replaced = true
		replaceSecret(existing, r)
	default:
		yamledit.SpaceBefore(yamledit.Set(sroot, r.Name, newSecret(r), nil))
	}
	if err := f.Save(SecretsFile, sdoc); err != nil {
		return e, err
	}
	if e.Net, err = f.editNetwork(r.Hosts, AllowHosts); err != nil {
		return e, err
	}
	envData, envExists := f.Current(SecretsEnvFile)
	if r.FromCommand {
		if f.fromPending == nil {
			f.fromPending = map[string]bool{}
		}
		f.fromPending[r.Name] = true
	}
	if !r.FromCommand && !EnvFileMentions(envData, r.Name) {
		f.Set(SecretsEnvFile, AppendEnvLine(envData, envExists, r.Name))
		e.EnvLine = true
	}
	e.Warnings, err = f.Commit()
	return e, err
}

func newSecret(r SecretRequest) *yaml.Node {
	m := yamledit.Map()
	yamledit.Set(m, "value", yamledit.Quoted("${"+r.Name+"}"), nil)
	yamledit.Set(m, "allow", hostSeq(r.Hosts), nil)
	sub := yamledit.Map()
	yamledit.Set(sub, "headers", yamledit.Bool(true), nil)
	yamledit.Set(sub, "query", yamledit.Bool(r.Query != nil && *r.Query), nil)
	yamledit.Set(sub, "body", yamledit.Bool(r.Body != nil && *r.Body), nil)
	yamledit.Set(m, "substitution", sub, nil)
	return m
}

func replaceSecret(existing *yaml.Node, r SecretRequest) {
	yamledit.Set(existing, "allow", hostSeq(r.Hosts), schema.SecretKeys)
	if r.Query == nil && r.Body == nil {
		return
	}
	sub := yamledit.Get(existing, "substitution")
	if sub == nil || sub.Kind != yaml.MappingNode {
		sub = yamledit.Map()
		yamledit.Set(sub, "headers", yamledit.Bool(true), substitutionKeys)
		yamledit.Set(existing, "substitution", sub, schema.SecretKeys)
	}
	if r.Query != nil {
		yamledit.Set(sub, "query", yamledit.Bool(*r.Query), substitutionKeys)
	}
	if r.Body != nil {
		yamledit.Set(sub, "body", yamledit.Bool(*r.Body), substitutionKeys)
	}
}

var substitutionKeys = schema.SubstitutionKeys

func hostSeq(hosts []string) *yaml.Node {
	seq := yamledit.Seq()
	for _, h := range hosts {
		seq.Content = append(seq.Content, yamledit.Quoted(h))
	}
	return seq
}

// SecretRemoval says what RemoveSecret did and what it left alone.
type SecretRemoval struct {
	// LeftHosts are the secret's hosts still in network.allow (something
	// else may need them).
	LeftHosts []string
	// EnvLine: secrets.env still has a line for the name (the user's).
	EnvLine  bool
	Warnings []schema.Problem
}

// RemoveSecret removes the binding of name from secrets.yaml.
func (f *Folder) RemoveSecret(name string) (SecretRemoval, error) {
	var r SecretRemoval
	doc, root, err := f.Doc(SecretsFile)
	if err != nil {
		return r, err
	}
	hosts := yamledit.Strings(yamledit.Get(yamledit.Get(root, name), "allow"))
	if !yamledit.Delete(root, name) {
		return r, fmt.Errorf("no secret %s in secrets.yaml; asb secret ls lists them", name)
	}
	if err := f.Save(SecretsFile, doc); err != nil {
		return r, err
	}
	if r.Warnings, err = f.Commit(); err != nil {
		return r, err
	}
	left := f.Summarize().Network.Allow
	r.LeftHosts = slices.DeleteFunc(hosts, func(h string) bool { return !slices.Contains(left, h) })
	envData, _ := f.Current(SecretsEnvFile)
	r.EnvLine = EnvFileMentions(envData, name)
	return r, nil
}
