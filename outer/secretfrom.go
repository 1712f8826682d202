package outer

import (
	"github.com/agents-sandbox/asb/runner"
	"github.com/agents-sandbox/asb/schema"
)

// FromCommand is where SecretView.From says a value comes from a command
// (asb secret add --from).
const FromCommand = "command"

// CheckOptions are schema.CheckDir's options for this folder on this host
// (CheckOptionsFor), with the secrets this edit binds to a command.
func (f *Folder) CheckOptions() schema.CheckOptions {
	opts := CheckOptionsFor(f.Dir, f.Getenv)
	recorded := opts.FromCommand
	opts.FromCommand = func(name string) bool { return recorded(name) || f.fromPending[name] }
	return opts
}

// CheckOptionsFor are schema.CheckDir's options for the outer folder dir on
// this host: its environment, and the secrets whose value comes from a
// command recorded here, with why one cannot run (judged without running
// it).
func CheckOptionsFor(dir string, getenv func(string) string) schema.CheckOptions {
	missing := runner.SecretCommandsMissing(dir, getenv)
	return schema.CheckOptions{
		Getenv: getenv,
		FromCommand: func(name string) bool {
			_, ok := missing[name]
			return ok
		},
		CommandMissing: func(name string) string { return missing[name] },
	}
}
